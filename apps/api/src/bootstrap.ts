import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { assertKeyringCoversStoredValues, assertMigrationsApplied } from '@mango/persistence';
import { loadConfig } from '@mango/platform-config';
import { createHttpApp, trustedProxies } from '@mango/platform-http';
import { createLogger } from '@mango/platform-logging';
import { MangoMetrics, serveMetrics } from '@mango/platform-metrics';
import { keyringFromSettings } from '@mango/platform-secrets';
import { restartOnCertificateRotation, TemporalConnector } from '@mango/platform-temporal';
import { initTracing } from '@mango/platform-tracing';
import { ApiEnv } from './api.env';
import { AppModule } from './app.module';
import { DEFAULT_CONSOLE_DIR, mountConsole } from './console';
import { DataSource } from 'typeorm';

export interface RunningApi {
  app: INestApplication;
  url: string;
  /** `http://host:port/metrics` when MANGO_METRICS_PORT is set. */
  metricsUrl?: string;
  close(): Promise<void>;
}

/** Boots the control-plane API. `main.ts` and the tests call exactly this. */
export async function bootstrap(rawEnv?: Record<string, string | undefined>): Promise<RunningApi> {
  const env = loadConfig(ApiEnv, rawEnv);
  // A bad keyring setting stops the process before anything else, naming the variable (never key material).
  const keyring = keyringFromSettings(env);
  // Normal start only checks the migration ledger; `mango migrate` applies migrations.
  const newerSchema = await assertMigrationsApplied({
    url: env.MANGO_DATABASE_URL,
    applicationName: 'mango-api',
  });
  const log = createLogger({ service: 'api', level: env.MANGO_LOG_LEVEL });
  if (newerSchema.length)
    log.warn(
      { migrations: newerSchema },
      'running on a schema a newer release expanded (compatible; finish the upgrade)',
    );
  const tracing = initTracing('api', env);
  const metrics = new MangoMetrics('api');
  // Temporal (Deployment schedules), when configured: connected lazily, through the one connector.
  const temporal = env.MANGO_TEMPORAL_ADDRESS
    ? TemporalConnector.fromSettings(env, restartOnCertificateRotation(log))
    : null;
  const app = await createHttpApp(AppModule.forRoot(env, metrics, keyring, temporal), {
    log,
    metrics,
    keepAliveTimeoutMs: env.MANGO_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    jsonShape: { maxDepth: env.MANGO_MAX_JSON_DEPTH, maxValues: env.MANGO_MAX_JSON_VALUES },
    jsonLimit: env.MANGO_MAX_REQUEST_BYTES,
    trustedProxies: trustedProxies(env.MANGO_TRUSTED_PROXIES),
    beforeRoutes: (a) => mountConsole(a, env.MANGO_CONSOLE_DIR ?? DEFAULT_CONSOLE_DIR, log),
  });
  try {
    // Refuse to serve when stored secrets (Vault credentials, webhook signing secrets) need a key it lacks.
    await assertKeyringCoversStoredValues(app.get(DataSource), keyring);
  } catch (e) {
    await app.close();
    throw e;
  }
  await app.listen(env.MANGO_API_PORT, env.MANGO_API_HOST);
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://${env.MANGO_API_HOST}:${address.port}`;
  log.info({ url }, 'api listening');
  const metricsServer = await serveMetrics(metrics, env, log);
  temporal?.start();
  return {
    app,
    url,
    metricsUrl: metricsServer?.url,
    close: async () => {
      temporal?.stop();
      await metricsServer?.close();
      await app.close();
      await tracing.shutdown();
    },
  };
}
