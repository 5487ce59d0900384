import 'reflect-metadata';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { ObjectStore, s3CredentialsFrom } from '@mango/adapter-object-store';
import { assertMigrationsApplied } from '@mango/persistence';
import { loadConfig } from '@mango/platform-config';
import { createHttpApp, trustedProxies } from '@mango/platform-http';
import { createLogger } from '@mango/platform-logging';
import { MangoMetrics, serveMetrics } from '@mango/platform-metrics';
import { initTracing } from '@mango/platform-tracing';
import { AppModule } from './app.module';
import { FilesEnv } from './files.env';
import { isUploadRequest } from './upload-body';

export interface RunningFiles {
  app: INestApplication;
  url: string;
  /** `http://host:port/metrics` when MANGO_METRICS_PORT is set. */
  metricsUrl?: string;
  close(): Promise<void>;
}

/** Boots the file/object service: `/v1/files*` on the object store, plus the cleanup sweeper. */
export async function bootstrap(rawEnv?: Record<string, string | undefined>): Promise<RunningFiles> {
  const env = loadConfig(FilesEnv, rawEnv);
  // Normal start only checks the migration ledger; `mango migrate` applies migrations.
  const newerSchema = await assertMigrationsApplied({
    url: env.MANGO_DATABASE_URL,
    applicationName: 'mango-files',
  });
  const log = createLogger({ service: 'files', level: env.MANGO_LOG_LEVEL });
  if (newerSchema.length)
    log.warn(
      { migrations: newerSchema },
      'running on a schema a newer release expanded (compatible; finish the upgrade)',
    );
  const store = new ObjectStore({
    endpoint: env.MANGO_S3_ENDPOINT,
    // Keys, or the default credential chain (web identity, container, instance profile).
    ...s3CredentialsFrom(env),
    region: env.MANGO_S3_REGION,
    bucket: env.MANGO_S3_BUCKET,
    payloadSigning: env.MANGO_S3_PAYLOAD_SIGNING,
  });
  await store.ensureBucket();
  const tracing = initTracing('files', env);
  const metrics = new MangoMetrics('files');
  const app = await createHttpApp(AppModule.forRoot(env, store, metrics), {
    log,
    metrics,
    keepAliveTimeoutMs: env.MANGO_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    jsonShape: { maxDepth: env.MANGO_MAX_JSON_DEPTH, maxValues: env.MANGO_MAX_JSON_VALUES },
    streamedBody: isUploadRequest,
    trustedProxies: trustedProxies(env.MANGO_TRUSTED_PROXIES),
  });
  const server = app.getHttpServer() as Server;
  server.requestTimeout = env.MANGO_FILES_REQUEST_TIMEOUT_MS;
  await app.listen(env.MANGO_FILES_PORT, env.MANGO_FILES_HOST);
  const { port } = app.getHttpServer().address() as { port: number };
  const url = `http://${env.MANGO_FILES_HOST}:${port}`;
  log.info({ url, bucket: env.MANGO_S3_BUCKET }, 'files listening');
  const metricsServer = await serveMetrics(metrics, env, log);
  return {
    app,
    url,
    metricsUrl: metricsServer?.url,
    close: async () => {
      await metricsServer?.close();
      await app.close();
      await tracing.shutdown();
    },
  };
}
