import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities } from './activities.contract';

const { databaseTime } = proxyActivities<ProbeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

export interface ProbeResult {
  greeting: string;
  database_time: string;
}

/**
 * The smallest real workflow: it proves the orchestrator's worker is registered with Temporal, runs a
 * deterministic workflow and reaches PostgreSQL through an activity.
 */
export async function probeWorkflow(name: string): Promise<ProbeResult> {
  const database_time = await databaseTime();
  return { greeting: `hello ${name}`, database_time };
}
