import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@mango/platform-config';
import { NestPinoLogger } from '@mango/platform-http';
import { createLogger } from '@mango/platform-logging';
import { MangoMetrics, serveMetrics } from '@mango/platform-metrics';
import { initTracing } from '@mango/platform-tracing';
import { AppModule } from './app.module';
import { SupervisorEnv } from './supervisor.env';

/** Boots `mango-worker docker`. `main.ts` and the tests call exactly this. */
export async function bootstrap(rawEnv?: Record<string, string | undefined>) {
  const env = loadConfig(SupervisorEnv, rawEnv);
  const log = createLogger({ service: 'supervisor', level: env.MANGO_LOG_LEVEL });
  const tracing = initTracing('supervisor', env);
  const metrics = new MangoMetrics('supervisor');
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(env, log, metrics), {
    logger: new NestPinoLogger(log),
  });
  await app.init();
  const metricsServer = await serveMetrics(metrics, env, log);
  return {
    app,
    metricsUrl: metricsServer?.url,
    close: async () => {
      await metricsServer?.close();
      await app.close();
      await tracing.shutdown();
    },
  };
}
