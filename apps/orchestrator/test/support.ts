import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AppProcess, logged, startApp } from '@mango/testing';

/** A real orchestrator process on a test database, its own task queue and (optionally) the scripted model. */
export function startOrchestrator(
  databaseUrl: string,
  options: { taskQueue: string; modelUrl?: string; env?: Record<string, string> },
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
      ...options.env,
    },
    logged('temporal worker running'),
    90_000,
  );
}

/**
 * With RECORD_HISTORIES=<dir>, keeps a finished workflow's history as a replay fixture (copy it into
 * apps/orchestrator/test/histories); otherwise does nothing.
 */
export async function recordHistory(workflowId: string, name: string): Promise<void> {
  const dir = process.env.RECORD_HISTORIES;
  if (!dir) return;
  const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(history, null, 1));
  } finally {
    await connection.close();
  }
}
