import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { DeploymentActivities } from './activities.contract';

const { runScheduledDeployment } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
  },
});

/** Set by Temporal on every workflow a Schedule starts: the action's nominal time (before jitter). */
const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/**
 * Started by a Deployment's Temporal Schedule (one workflow per action): records the run through one
 * idempotent activity. The run's `scheduled_at` is the Schedule's nominal time for this action.
 */
export async function deploymentRunWorkflow(input: { deploymentId: string }): Promise<string | null> {
  const info = workflowInfo();
  const scheduled: Date = info.typedSearchAttributes.get(SCHEDULED_START) ?? info.startTime;
  return runScheduledDeployment({
    deploymentId: input.deploymentId,
    scheduledAt: new Date(scheduled).toISOString(),
  });
}
