import { DeploymentRunner, DeploymentScheduler } from '@mango/feature-deployments';
import type { PriceTable } from '@mango/domain-sessions';
import { DEFAULT_SESSION_SERVICE_LIMITS, SessionsService } from '@mango/feature-sessions';
import type { DeploymentActivities } from '@mango/workflows';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { DataSource } from 'typeorm';

/**
 * Scheduled Deployment runs: the same runner as the API's manual run, with the same Session creation (and
 * the same running-Sessions limit, when the orchestrator is given it).
 */
export function createDeploymentActivities(deps: {
  dataSource: DataSource;
  prices: PriceTable;
  scheduler: DeploymentScheduler | null;
  metrics: MangoMetrics;
  /** Fair use: a run in a Workspace with this many turns under way records `session_rate_limited_error`. */
  runningSessionsPerWorkspace?: number | null;
}): DeploymentActivities {
  const runner = new DeploymentRunner(
    deps.dataSource,
    new SessionsService(deps.dataSource, deps.metrics, undefined, deps.prices, {
      ...DEFAULT_SESSION_SERVICE_LIMITS,
      runningSessionsPerWorkspace: deps.runningSessionsPerWorkspace ?? null,
    }),
    deps.scheduler,
  );
  return {
    async runScheduledDeployment({ deploymentId, scheduledAt }) {
      const run = await runner.run(deploymentId, { type: 'schedule', scheduledAt: new Date(scheduledAt) });
      return run?.id ?? null;
    },
  };
}
