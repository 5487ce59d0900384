import { DomainError, ErrorCode } from '@mango/domain-kernel';
import type { PauseErrorType, RunErrorType } from '@mango/domain-deployments';
import { SessionsService } from '@mango/feature-sessions';
import { newId } from '@mango/platform-ids';
import {
  AgentEntity,
  DeploymentEntity,
  DeploymentRunEntity,
  EnvironmentEntity,
  insertRow,
  pauseActiveDeployments,
  recordWebhookEvents,
  VaultEntity,
} from '@mango/persistence';
import { DataSource, EntityManager, In } from 'typeorm';
import type { DeploymentScheduler } from './deployment-scheduler';
import { DeploymentRunView, renderRun } from './deployment.view';

export type RunTrigger = { type: 'manual' } | { type: 'schedule'; scheduledAt: Date };

/**
 * Runs a Deployment once: checks its pinned templates, then either creates the Session (with its
 * `deployment_id`) and the run record in one transaction, or records a run with an error — and, for a
 * template that is archived or gone, auto-pauses the Deployment with that §3.11 error type. Used by
 * `POST /v1/deployments/{id}/run` (apps/api) and by the scheduled workflow's activity (apps/orchestrator).
 */
export class DeploymentRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sessions: SessionsService,
    private readonly scheduler: DeploymentScheduler | null,
  ) {}

  /** The run, or null when a scheduled trigger finds the Deployment paused, archived or gone (nothing recorded). */
  async run(deploymentId: string, trigger: RunTrigger): Promise<DeploymentRunView | null> {
    const d = await this.dataSource.manager.findOne(DeploymentEntity, { where: { id: deploymentId } });
    if (!d || d.archivedAt || !d.schedule) {
      // A Schedule firing for a Deployment that is gone, archived or manual-only is an orphan.
      if (trigger.type === 'schedule') await this.scheduler?.remove(deploymentId);
      if (!d || d.archivedAt) return null;
    }
    if (trigger.type === 'schedule') {
      if (!d.schedule) return null;
      if (d.status === 'paused') {
        // Paused only in PostgreSQL (an automatic pause from another feature): pause the Schedule too.
        await this.scheduler?.setPaused(d.id, true);
        return null;
      }
      // A repeated action (activity retry, duplicate trigger) records one run per scheduled time.
      const prior = await this.dataSource.manager.findOne(DeploymentRunEntity, {
        where: { deploymentId: d.id, scheduledAt: trigger.scheduledAt },
      });
      if (prior) return renderRun(prior);
    }
    const problem = await this.templateProblem(this.dataSource.manager, d);
    if (problem) return this.fail(d, trigger, problem.type, problem.message, true);
    const runId = newId('deploymentRun');
    let run: DeploymentRunEntity | undefined;
    try {
      await this.sessions.create(
        d.workspaceId,
        {
          agent: { type: 'agent', id: d.agentId, version: d.agentVersion },
          environment_id: d.environmentId,
          initial_events: d.initialEvents,
          resources: d.resources,
          ...(d.vaultIds.length ? { vault_ids: d.vaultIds } : {}),
          ...(d.budget ? { budget: d.budget } : {}),
        },
        {
          deploymentId: d.id,
          withinTransaction: async (tx, session) => {
            run = this.runRow(runId, d, trigger, session.id, null, session.createdAt);
            await insertRow(tx, DeploymentRunEntity, run);
            await recordWebhookEvents(
              tx,
              d.workspaceId,
              [
                { type: 'deployment_run.started', id: run.id, extra: { deployment_id: d.id } },
                { type: 'deployment_run.succeeded', id: run.id, extra: { deployment_id: d.id } },
              ],
              session.createdAt,
            );
          },
        },
      );
    } catch (e) {
      // The Workspace at its running-Sessions limit (fair use): the hosted run error for a rate limit.
      if (e instanceof DomainError && e.code === ErrorCode.RateLimited)
        return this.fail(d, trigger, 'session_rate_limited_error', e.message, false);
      if (e instanceof DomainError)
        return this.fail(d, trigger, 'session_creation_rejected_error', e.message, false);
      throw e;
    }
    return renderRun(run!);
  }

  private runRow(
    id: string,
    d: DeploymentEntity,
    trigger: RunTrigger,
    sessionId: string | null,
    error: { type: string; message: string } | null,
    now: Date,
  ): DeploymentRunEntity {
    return this.dataSource.manager.create(DeploymentRunEntity, {
      id,
      workspaceId: d.workspaceId,
      deploymentId: d.id,
      agentId: d.agentId,
      agentVersion: d.agentVersion,
      sessionId,
      error,
      triggerType: trigger.type,
      scheduledAt: trigger.type === 'schedule' ? trigger.scheduledAt : null,
      createdAt: now,
    });
  }

  /** Records a failed run; a pause-type error also auto-pauses the Deployment (and its Schedule). */
  private async fail(
    d: DeploymentEntity,
    trigger: RunTrigger,
    type: RunErrorType,
    message: string,
    pause: boolean,
  ): Promise<DeploymentRunView> {
    const now = new Date();
    const run = this.runRow(newId('deploymentRun', now.getTime()), d, trigger, null, { type, message }, now);
    let paused = false;
    await this.dataSource.transaction(async (tx) => {
      await insertRow(tx, DeploymentRunEntity, run);
      const events: Array<{ type: string; id: string; extra?: Record<string, unknown> }> = [
        { type: 'deployment_run.started', id: run.id, extra: { deployment_id: d.id } },
        { type: 'deployment_run.failed', id: run.id, extra: { deployment_id: d.id } },
      ];
      if (pause) paused = await pauseForError(tx, d.id, type as PauseErrorType, now);
      if (paused) events.push({ type: 'deployment.paused', id: d.id });
      await recordWebhookEvents(tx, d.workspaceId, events, now);
    });
    if (paused && d.schedule) await this.scheduler?.setPaused(d.id, true);
    return renderRun(run);
  }

  /** The first pinned template that is archived or gone, as a §3.11 error. */
  async templateProblem(
    em: EntityManager,
    d: DeploymentEntity,
  ): Promise<{ type: PauseErrorType; message: string } | null> {
    const agent = await em.findOne(AgentEntity, { where: { id: d.agentId, workspaceId: d.workspaceId } });
    if (!agent) return { type: 'unknown_error', message: `agent ${d.agentId} not found` };
    if (agent.archivedAt) return { type: 'agent_archived_error', message: `agent ${d.agentId} is archived` };
    const env = await em.findOne(EnvironmentEntity, {
      where: { id: d.environmentId, workspaceId: d.workspaceId },
    });
    if (!env || env.deletedAt)
      return { type: 'environment_not_found_error', message: `environment ${d.environmentId} not found` };
    if (env.archivedAt)
      return { type: 'environment_archived_error', message: `environment ${d.environmentId} is archived` };
    const storeIds = d.resources.map((r) => String(r.memory_store_id));
    if (storeIds.length) {
      const rows: Array<{ id: string; archived_at: Date | null }> = await em.query(
        'SELECT id, archived_at FROM memory_stores WHERE workspace_id = $1 AND id = ANY($2::text[])',
        [d.workspaceId, storeIds],
      );
      for (const id of storeIds) {
        const row = rows.find((r) => r.id === id);
        if (!row)
          return { type: 'session_resource_not_found_error', message: `memory store ${id} not found` };
        if (row.archived_at)
          return { type: 'memory_store_archived_error', message: `memory store ${id} is archived` };
      }
    }
    if (d.vaultIds.length) {
      const vaults = await em.find(VaultEntity, {
        where: { id: In(d.vaultIds), workspaceId: d.workspaceId },
      });
      for (const id of d.vaultIds) {
        const v = vaults.find((x) => x.id === id);
        if (!v) return { type: 'vault_not_found_error', message: `vault ${id} not found` };
        if (v.archivedAt) return { type: 'vault_archived_error', message: `vault ${id} is archived` };
      }
    }
    return null;
  }
}

/** Pauses an active Deployment with an error reason; false when it was not active. */
export async function pauseForError(
  tx: EntityManager,
  deploymentId: string,
  type: PauseErrorType,
  now: Date,
): Promise<boolean> {
  return (await pauseActiveDeployments(tx, 'id = $1', [deploymentId], type, now)).length > 0;
}
