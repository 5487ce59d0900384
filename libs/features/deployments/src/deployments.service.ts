import { Inject, Injectable } from '@nestjs/common';
import { DeploymentFields, parseDeploymentCreate, parseDeploymentUpdate } from '@mango/domain-deployments';
import { applyMetadataPatch, conflict, invalidRequest, notFound } from '@mango/domain-kernel';
import { SessionsService } from '@mango/feature-sessions';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  parseTimeRange,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import {
  AgentEntity,
  AgentVersionEntity,
  DeploymentEntity,
  DeploymentRunEntity,
  EnvironmentEntity,
  insertRow,
  recordWebhookEvents,
  VaultEntity,
} from '@mango/persistence';
import { DataSource, EntityManager, In, IsNull, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { DeploymentRunner } from './deployment-runner';
import { DeploymentScheduler } from './deployment-scheduler';
import { DeploymentRunView, DeploymentView, renderDeployment, renderRun } from './deployment.view';

export const DEPLOYMENT_SCHEDULER = Symbol.for('mango.DeploymentScheduler');

type Query = Record<string, unknown>;

function whereCreatedAt(
  qb: SelectQueryBuilder<ObjectLiteral>,
  alias: string,
  raw: unknown,
  allowed?: Array<'gt' | 'gte' | 'lt' | 'lte'>,
) {
  const range = parseTimeRange(raw, 'created_at', allowed);
  const ops = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
  for (const op of Object.keys(ops) as Array<keyof typeof ops>) {
    const at = range[op];
    if (at) qb.andWhere(`${alias}.created_at ${ops[op]} :${op}`, { [op]: at });
  }
}

/** Deployments and their runs (openapi.yaml, Deployments; docs/api-guide.md, Deployments). Workspace API keys only. */
@Injectable()
export class DeploymentsService {
  private readonly runner: DeploymentRunner;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(SessionsService) sessions: SessionsService,
    @Inject(DEPLOYMENT_SCHEDULER) private readonly scheduler: DeploymentScheduler | null,
  ) {
    this.runner = new DeploymentRunner(dataSource, sessions, scheduler);
  }

  async create(workspaceId: string, body: unknown): Promise<DeploymentView> {
    const input = parseDeploymentCreate(body);
    this.requireScheduler(input.schedule);
    return this.dataSource.transaction(async (tx) => {
      const version = await this.checkTemplates(tx, workspaceId, input);
      const now = new Date();
      const d = tx.create(DeploymentEntity, {
        id: newId('deployment', now.getTime()),
        workspaceId,
        name: input.name,
        description: input.description,
        agentId: input.agent.id,
        agentVersion: version,
        environmentId: input.environmentId,
        initialEvents: input.initialEvents as unknown as Array<Record<string, unknown>>,
        resources: resourcesOf(input.resources),
        vaultIds: input.vaultIds,
        schedule: input.schedule ? scheduleOf(input.schedule) : null,
        status: 'active',
        pausedReason: null,
        budget: input.budget as unknown as Record<string, unknown> | null,
        metadata: input.metadata,
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
      });
      await insertRow(tx, DeploymentEntity, d);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'deployment.created', id: d.id }], now);
      // Inside the transaction: a Schedule that cannot be created rolls the Deployment back.
      await this.syncSchedule(d);
      return this.render(tx, d);
    });
  }

  async get(workspaceId: string, id: string): Promise<DeploymentView> {
    return this.render(this.dataSource.manager, await this.find(this.dataSource.manager, workspaceId, id));
  }

  async list(workspaceId: string, query: Query): Promise<Page<DeploymentView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'agent_id', 'status', 'include_archived', 'created_at']);
    const limit = parseLimit(query.limit);
    const includeArchived = parseBooleanQuery(query.include_archived, 'include_archived');
    const qb = this.dataSource.manager
      .createQueryBuilder(DeploymentEntity, 'd')
      .where('d.workspace_id = :workspaceId', { workspaceId })
      .orderBy('d.id', 'DESC')
      .limit(limit + 1);
    if (query.status !== undefined) {
      if (includeArchived) throw invalidRequest('status cannot be combined with include_archived');
      if (query.status !== 'active' && query.status !== 'paused')
        throw invalidRequest('status must be active or paused');
      qb.andWhere('d.status = :status', { status: query.status });
    }
    if (!includeArchived) qb.andWhere('d.archived_at IS NULL');
    if (query.agent_id !== undefined) {
      if (!isId('agent', query.agent_id)) throw invalidRequest('agent_id must be an agent_ id');
      qb.andWhere('d.agent_id = :agentId', { agentId: query.agent_id });
    }
    whereCreatedAt(qb, 'd', query.created_at, ['gte', 'lte']);
    if (typeof query.page === 'string')
      qb.andWhere('d.id < :after', {
        after: decodeCursor(query.page, { scope: 'deployments', order: 'desc' }).after,
      });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await qb.getMany();
    const page = toPage(
      rows,
      limit,
      (d) => d.id,
      (d) => d,
      { scope: 'deployments', order: 'desc' },
    );
    const data: DeploymentView[] = [];
    for (const d of page.data) data.push(await this.render(this.dataSource.manager, d));
    return { ...page, data };
  }

  async update(workspaceId: string, id: string, body: unknown): Promise<DeploymentView> {
    const patch = parseDeploymentUpdate(body);
    if (patch.schedule) this.requireScheduler(patch.schedule);
    return this.dataSource.transaction(async (tx) => {
      const d = await this.find(tx, workspaceId, id, true);
      if (d.archivedAt) throw conflict(`deployment ${d.id} is archived and read-only`);
      const next: DeploymentFields = {
        name: patch.name ?? d.name,
        description: patch.description !== undefined ? patch.description : d.description,
        agent: patch.agent ?? { id: d.agentId, version: d.agentVersion },
        environmentId: patch.environmentId ?? d.environmentId,
        initialEvents: (patch.initialEvents ?? d.initialEvents) as DeploymentFields['initialEvents'],
        schedule: patch.schedule !== undefined ? patch.schedule : null,
        resources:
          patch.resources ??
          d.resources.map((r) => ({
            memoryStoreId: String(r.memory_store_id),
            access: r.access as 'read_write' | 'read_only',
            instructions: (r.instructions as string | null) ?? null,
          })),
        vaultIds: patch.vaultIds ?? d.vaultIds,
        budget: patch.budget !== undefined ? patch.budget : (d.budget as DeploymentFields['budget']),
        metadata: applyMetadataPatch(d.metadata, patch.metadata),
      };
      const version = await this.checkTemplates(tx, workspaceId, next);
      d.name = next.name;
      d.description = next.description;
      d.agentId = next.agent.id;
      d.agentVersion = version;
      d.environmentId = next.environmentId;
      d.initialEvents = next.initialEvents as unknown as Array<Record<string, unknown>>;
      if (patch.schedule !== undefined) d.schedule = patch.schedule ? scheduleOf(patch.schedule) : null;
      d.resources = resourcesOf(next.resources);
      d.vaultIds = next.vaultIds;
      d.budget = next.budget as unknown as Record<string, unknown> | null;
      d.metadata = next.metadata;
      d.updatedAt = new Date();
      await tx.save(DeploymentEntity, d);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'deployment.updated', id: d.id }], d.updatedAt);
      if (patch.schedule !== undefined) await this.syncSchedule(d);
      return this.render(tx, d);
    });
  }

  async archive(workspaceId: string, id: string): Promise<DeploymentView> {
    return this.dataSource.transaction(async (tx) => {
      const d = await this.find(tx, workspaceId, id, true);
      if (!d.archivedAt) {
        d.archivedAt = new Date();
        await tx.update(DeploymentEntity, { id: d.id }, { archivedAt: d.archivedAt });
        await recordWebhookEvents(tx, workspaceId, [{ type: 'deployment.archived', id: d.id }], d.archivedAt);
        await this.scheduler?.remove(d.id);
      }
      return this.render(tx, d);
    });
  }

  async pause(workspaceId: string, id: string): Promise<DeploymentView> {
    return this.setPaused(workspaceId, id, true);
  }

  async unpause(workspaceId: string, id: string): Promise<DeploymentView> {
    return this.setPaused(workspaceId, id, false);
  }

  private async setPaused(workspaceId: string, id: string, paused: boolean): Promise<DeploymentView> {
    return this.dataSource.transaction(async (tx) => {
      const d = await this.find(tx, workspaceId, id, true);
      if (d.archivedAt) throw conflict(`deployment ${d.id} is archived`);
      const want = paused ? 'paused' : 'active';
      if (d.status !== want) {
        d.status = want;
        d.pausedReason = paused ? { type: 'manual' } : null;
        d.updatedAt = new Date();
        await tx.update(
          DeploymentEntity,
          { id: d.id },
          { status: d.status, pausedReason: d.pausedReason, updatedAt: d.updatedAt },
        );
        await recordWebhookEvents(
          tx,
          workspaceId,
          [{ type: paused ? 'deployment.paused' : 'deployment.unpaused', id: d.id }],
          d.updatedAt,
        );
      }
      // Always mirrored (an automatic pause may have paused the Deployment only in PostgreSQL).
      if (d.schedule) await this.scheduler?.setPaused(d.id, paused);
      return this.render(tx, d);
    });
  }

  /** A manual run: works while paused (openapi.yaml, Deployments; docs/api-guide.md, Deployments); an archived Deployment is 409. */
  async run(workspaceId: string, id: string): Promise<DeploymentRunView> {
    const d = await this.find(this.dataSource.manager, workspaceId, id);
    if (d.archivedAt) throw conflict(`deployment ${d.id} is archived`);
    return (await this.runner.run(d.id, { type: 'manual' }))!;
  }

  async getRun(workspaceId: string, id: string): Promise<DeploymentRunView> {
    if (!isId('deploymentRun', id)) throw notFound('deployment_run', id);
    const r = await this.dataSource.manager.findOne(DeploymentRunEntity, { where: { id, workspaceId } });
    if (!r) throw notFound('deployment_run', id);
    return renderRun(r);
  }

  async listRuns(workspaceId: string, query: Query): Promise<Page<DeploymentRunView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'deployment_id', 'has_error', 'trigger_type', 'created_at']);
    const limit = parseLimit(query.limit);
    const qb = this.dataSource.manager
      .createQueryBuilder(DeploymentRunEntity, 'r')
      .where('r.workspace_id = :workspaceId', { workspaceId })
      .orderBy('r.id', 'DESC')
      .limit(limit + 1);
    if (query.deployment_id !== undefined) {
      // An unknown id is an empty page (hosted wire contract); a malformed one is 400.
      if (!isId('deployment', query.deployment_id)) throw invalidRequest('deployment_id must be a depl_ id');
      qb.andWhere('r.deployment_id = :deploymentId', { deploymentId: query.deployment_id });
    }
    if (query.has_error !== undefined) {
      const hasError = parseBooleanQuery(query.has_error, 'has_error');
      qb.andWhere(hasError ? 'r.error IS NOT NULL' : 'r.error IS NULL');
    }
    if (query.trigger_type !== undefined) {
      if (query.trigger_type !== 'schedule' && query.trigger_type !== 'manual')
        throw invalidRequest('trigger_type must be schedule or manual');
      qb.andWhere('r.trigger_type = :t', { t: query.trigger_type });
    }
    whereCreatedAt(qb, 'r', query.created_at);
    if (typeof query.page === 'string')
      qb.andWhere('r.id < :after', {
        after: decodeCursor(query.page, { scope: 'deployment_runs', order: 'desc' }).after,
      });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (r) => r.id, renderRun, {
      scope: 'deployment_runs',
      order: 'desc',
    });
  }

  private requireScheduler(schedule: DeploymentFields['schedule']): void {
    if (schedule && !this.scheduler)
      throw invalidRequest(
        'cron schedules need Temporal on the API (MANGO_TEMPORAL_ADDRESS); manual runs work without',
      );
  }

  private async syncSchedule(d: DeploymentEntity): Promise<void> {
    if (!this.scheduler) return;
    if (!d.schedule) return this.scheduler.remove(d.id);
    await this.scheduler.upsert({
      deploymentId: d.id,
      expression: d.schedule.expression,
      timezone: d.schedule.timezone,
      jitterMs: d.schedule.jitter_ms,
      paused: d.status === 'paused',
    });
  }

  /** Pinned templates must exist and be live when the Deployment is written; returns the pinned version. */
  private async checkTemplates(
    tx: EntityManager,
    workspaceId: string,
    input: DeploymentFields,
  ): Promise<number> {
    const agent = await tx.findOne(AgentEntity, { where: { id: input.agent.id, workspaceId } });
    if (!agent) throw invalidRequest(`agent ${input.agent.id} not found`);
    if (agent.archivedAt) throw invalidRequest(`agent ${agent.id} is archived`);
    const version = input.agent.version ?? agent.currentVersion;
    if (!(await tx.findOne(AgentVersionEntity, { where: { agentId: agent.id, version } })))
      throw invalidRequest(`agent ${agent.id} has no version ${version}`);
    const env = await tx.findOne(EnvironmentEntity, {
      where: { id: input.environmentId, workspaceId, deletedAt: IsNull() },
    });
    if (!env) throw invalidRequest(`environment ${input.environmentId} not found`);
    if (env.archivedAt) throw invalidRequest(`environment ${env.id} is archived`);
    for (const r of input.resources) {
      const rows: Array<{ archived_at: Date | null }> = await tx.query(
        'SELECT archived_at FROM memory_stores WHERE id = $1 AND workspace_id = $2',
        [r.memoryStoreId, workspaceId],
      );
      if (!rows[0]) throw invalidRequest(`memory store ${r.memoryStoreId} not found`);
      if (rows[0].archived_at) throw invalidRequest(`memory store ${r.memoryStoreId} is archived`);
    }
    if (input.vaultIds.length) {
      const vaults = await tx.find(VaultEntity, { where: { id: In(input.vaultIds), workspaceId } });
      for (const id of input.vaultIds) {
        const v = vaults.find((x) => x.id === id);
        if (!v) throw invalidRequest(`vault ${id} not found`);
        if (v.archivedAt) throw invalidRequest(`vault ${id} is archived`);
      }
    }
    return version;
  }

  private async render(em: EntityManager, d: DeploymentEntity): Promise<DeploymentView> {
    if (!d.schedule) return renderDeployment(d);
    const last: Array<{ at: Date | null }> = await em.query(
      `SELECT max(scheduled_at) AS at FROM deployment_runs WHERE deployment_id = $1 AND trigger_type = 'schedule'`,
      [d.id],
    );
    const upcoming =
      this.scheduler && d.status === 'active' && !d.archivedAt ? await this.scheduler.upcoming(d.id) : [];
    return renderDeployment(d, { lastRunAt: last[0]?.at ? new Date(last[0].at) : null, upcoming });
  }

  private async find(
    em: EntityManager,
    workspaceId: string,
    id: string,
    lock = false,
  ): Promise<DeploymentEntity> {
    if (!isId('deployment', id)) throw notFound('deployment', id);
    const d = await em.findOne(DeploymentEntity, {
      where: { id, workspaceId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!d) throw notFound('deployment', id);
    return d;
  }
}

function scheduleOf(s: NonNullable<DeploymentFields['schedule']>): NonNullable<DeploymentEntity['schedule']> {
  return { type: 'cron', expression: s.expression, timezone: s.timezone, jitter_ms: s.jitterMs };
}

function resourcesOf(rs: DeploymentFields['resources']): Array<Record<string, unknown>> {
  return rs.map((r) => ({
    type: 'memory_store',
    memory_store_id: r.memoryStoreId,
    access: r.access,
    instructions: r.instructions,
  }));
}
