import type { DeploymentEntity, DeploymentRunEntity } from '@mango/persistence';
import { renderDeployment, renderRun } from './deployment.view';

const at = new Date('2026-12-01T10:00:00.000Z');

describe('deployment views', () => {
  it('renders trigger contexts: schedule with its nominal time, manual without one', () => {
    const run = {
      id: 'drun_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      workspaceId: 'wrkspc_default',
      deploymentId: 'depl_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      agentId: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      agentVersion: 3,
      sessionId: null,
      error: { type: 'agent_archived_error', message: 'archived' },
      triggerType: 'schedule',
      scheduledAt: at,
      createdAt: at,
    } as DeploymentRunEntity;
    expect(renderRun(run)).toMatchObject({
      agent: { type: 'agent', id: run.agentId, version: 3 },
      session_id: null,
      error: { type: 'agent_archived_error' },
      trigger_context: { type: 'schedule', scheduled_at: at.toISOString() },
    });
    expect(
      renderRun({ ...run, triggerType: 'manual', scheduledAt: null } as DeploymentRunEntity).trigger_context,
    ).toEqual({
      type: 'manual',
    });
  });

  it('renders a manual-only Deployment with schedule null and never a jitter detail', () => {
    const d = {
      id: 'depl_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      name: 'n',
      description: null,
      agentId: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      agentVersion: 1,
      environmentId: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      initialEvents: [],
      resources: [],
      schedule: null,
      status: 'active',
      pausedReason: null,
      budget: null,
      metadata: {},
      createdAt: at,
      updatedAt: at,
      archivedAt: null,
    } as unknown as DeploymentEntity;
    expect(renderDeployment(d).schedule).toBeNull();
    const scheduled = renderDeployment(
      {
        ...d,
        schedule: { type: 'cron', expression: '* * * * *', timezone: 'UTC', jitter_ms: 9000 },
      } as DeploymentEntity,
      { lastRunAt: at, upcoming: ['2026-12-01T10:01:00.000Z'] },
    );
    expect(scheduled.schedule).toEqual({
      type: 'cron',
      expression: '* * * * *',
      timezone: 'UTC',
      last_run_at: at.toISOString(),
      upcoming_runs_at: ['2026-12-01T10:01:00.000Z'],
    });
  });
});
