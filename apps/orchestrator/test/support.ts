import { AppProcess, logged, startApp } from '@mango/testing';

/** A real orchestrator process on a test database, its own task queue and (optionally) the scripted model. */
export function startOrchestrator(
  databaseUrl: string,
  options: { taskQueue: string; modelUrl?: string },
): Promise<AppProcess> {
  return startApp(
    'apps/orchestrator/src/main.ts',
    {
      MANGO_DATABASE_URL: databaseUrl,
      MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
      MANGO_TASK_QUEUE: options.taskQueue,
      ...(options.modelUrl
        ? { MANGO_MODEL_BASE_URL: options.modelUrl, MANGO_MODEL_API_KEY: 'sk-scripted-model-key' }
        : {}),
      MANGO_LOG_LEVEL: 'info',
    },
    logged('temporal worker running'),
    90_000,
  );
}
