import type { DeploymentEntity, DeploymentRunEntity } from '@mango/persistence';

/** The wire form of a Deployment (openapi.yaml `Deployment`). `schedule` carries Temporal's upcoming runs. */
export function renderDeployment(
  d: DeploymentEntity,
  extra: { lastRunAt: Date | null; upcoming: string[] } = { lastRunAt: null, upcoming: [] },
) {
  return {
    type: 'deployment' as const,
    id: d.id,
    name: d.name,
    description: d.description,
    agent: { type: 'agent' as const, id: d.agentId, version: d.agentVersion },
    environment_id: d.environmentId,
    initial_events: d.initialEvents,
    resources: d.resources,
    vault_ids: d.vaultIds,
    schedule: d.schedule
      ? {
          type: 'cron' as const,
          expression: d.schedule.expression,
          timezone: d.schedule.timezone,
          last_run_at: extra.lastRunAt ? extra.lastRunAt.toISOString() : null,
          upcoming_runs_at: extra.upcoming,
        }
      : null,
    status: d.status,
    paused_reason: d.pausedReason,
    budget: d.budget,
    metadata: d.metadata,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    archived_at: d.archivedAt ? d.archivedAt.toISOString() : null,
  };
}

export type DeploymentView = ReturnType<typeof renderDeployment>;

export function renderRun(r: DeploymentRunEntity) {
  return {
    type: 'deployment_run' as const,
    id: r.id,
    deployment_id: r.deploymentId,
    agent: { type: 'agent' as const, id: r.agentId, version: r.agentVersion },
    session_id: r.sessionId,
    error: r.error,
    trigger_context:
      r.triggerType === 'schedule'
        ? { type: 'schedule' as const, scheduled_at: r.scheduledAt!.toISOString() }
        : { type: 'manual' as const },
    created_at: r.createdAt.toISOString(),
  };
}

export type DeploymentRunView = ReturnType<typeof renderRun>;
