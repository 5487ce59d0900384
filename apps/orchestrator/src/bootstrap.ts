import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { assertMigrationsApplied } from '@mango/persistence';
import { loadConfig } from '@mango/platform-config';
import { NestPinoLogger } from '@mango/platform-http';
import { createLogger } from '@mango/platform-logging';
import { MangoMetrics, serveMetrics } from '@mango/platform-metrics';
import { keyringFromSettings } from '@mango/platform-secrets';
import { parseCidrList } from '@mango/domain-webhooks';
import { restartOnCertificateRotation, TemporalConnector } from '@mango/platform-temporal';
import { initTracing } from '@mango/platform-tracing';
import { AppModule } from './app.module';
import { OrchestratorEnv } from './orchestrator.env';

/** Boots the orchestration worker (no HTTP port). `main.ts` and the tests call exactly this. */
export async function bootstrap(rawEnv?: Record<string, string | undefined>) {
  const env = loadConfig(OrchestratorEnv, rawEnv);
  // Webhook settings fail at boot, naming the variable, rather than at the first delivery.
  try {
    parseCidrList(env.MANGO_WEBHOOK_ALLOWED_CIDRS);
  } catch (e) {
    throw new Error(`MANGO_WEBHOOK_ALLOWED_CIDRS: ${(e as Error).message}`);
  }
  // So do keyring settings (the worker builds the keyring again when it starts).
  keyringFromSettings(env);
  // Normal start only checks the migration ledger; `mango migrate` applies migrations.
  const newerSchema = await assertMigrationsApplied({
    url: env.MANGO_DATABASE_URL,
    applicationName: 'mango-orchestrator',
  });
  const log = createLogger({ service: 'orchestrator', level: env.MANGO_LOG_LEVEL });
  if (newerSchema.length)
    log.warn(
      { migrations: newerSchema },
      'running on a schema a newer release expanded (compatible; finish the upgrade)',
    );
  const tracing = initTracing('orchestrator', env);
  const metrics = new MangoMetrics('orchestrator');
  // Every Temporal connection of this process (worker, relays, sweeper, reconciler) goes through it.
  const temporal = TemporalConnector.fromSettings(env, restartOnCertificateRotation(log));
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(env, log, metrics, temporal), {
    logger: new NestPinoLogger(log),
  });
  await app.init();
  temporal.start();
  const metricsServer = await serveMetrics(metrics, env, log);
  return {
    app,
    metricsUrl: metricsServer?.url,
    close: async () => {
      temporal.stop();
      await metricsServer?.close();
      await app.close();
      await tracing.shutdown();
    },
  };
}
