import { AppProcess, logged, startApp } from './app-process';

export interface OrchestratorOptions {
  /** Its own task queue, so processes of other tests on the same Temporal never take its work. */
  taskQueue: string;
  /** The model endpoint (a scripted Messages API); without it the orchestrator runs with no model. */
  modelUrl?: string;
  /** The model API key it sends (a test checks it never leaks into logs or events). */
  modelKey?: string;
  /** Any other variables, applied last. */
  env?: Record<string, string>;
  /** How long it may take to say its worker is running (default 90 s). */
  timeoutMs?: number;
  /** Node options before the entry (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

/**
 * A real orchestrator process on a test database and the Temporal of the environment
 * (MANGO_TEMPORAL_ADDRESS), logging at info: it is up when it says 'temporal worker running'.
 */
export function startOrchestrator(databaseUrl: string, options: OrchestratorOptions): Promise<AppProcess> {
  return startApp(
    'apps/orchestrator/src/main.ts',
    {
      MANGO_DATABASE_URL: databaseUrl,
      MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
      MANGO_TASK_QUEUE: options.taskQueue,
      ...(options.modelUrl
        ? {
            MANGO_MODEL_BASE_URL: options.modelUrl,
            MANGO_MODEL_API_KEY: options.modelKey ?? 'sk-scripted-model-key',
          }
        : {}),
      MANGO_LOG_LEVEL: 'info',
      ...options.env,
    },
    logged('temporal worker running'),
    options.timeoutMs ?? 90_000,
    options.nodeArgs,
  );
}
