import { Inject, Injectable } from '@nestjs/common';
import { applyMetadataPatch, conflict, notFound } from '@mango/domain-kernel';
import { createHealthcheck } from '@mango/domain-work-lease';
import type { Principal } from '@mango/feature-auth';
import { isId, newId } from '@mango/platform-ids';
import { MangoMetrics } from '@mango/platform-metrics';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import {
  dbNow,
  EnvironmentEntity,
  insertRow,
  leaseColumns,
  WORK_CHANNEL,
  WorkItemEntity,
  WorkItemRepository,
} from '@mango/persistence';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { parseCreateBody, parseUpdateBody } from './work-input';
import { environmentPrincipal } from './work-principals';
import { renderWork, WorkView } from './work.view';

export { WORK_SETTINGS, type WorkSettings } from './work-settings';

/**
 * The Environment Work protocol's Workspace-key routes (create a healthcheck, get, update metadata,
 * list) and the queue's stats and gauges (docs/api-guide.md, "Environment Work"). Poll is
 * `PollWorkUseCase`; the lease transitions are `WorkTransitionsService`. Every read reconciles
 * deadlines first (the pure state machine in @mango/domain-work-lease, PostgreSQL's clock).
 */
@Injectable()
export class WorkService {
  private readonly items = new WorkItemRepository();

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MangoMetrics) metrics: MangoMetrics,
  ) {
    // Queue gauges are read from PostgreSQL at scrape time (the table is the truth, whichever API
    // replica claimed): every replica reports the same values, so aggregate them with max().
    metrics.gauge(
      'mango_work_queue_depth',
      'Queued Work items not yet claimed, by Environment (cluster-wide; aggregate replicas with max).',
      ['environment_id'],
      () => this.queueSamples('depth'),
    );
    metrics.gauge(
      'mango_work_queue_oldest_age_seconds',
      'Age of the oldest queued Work item, by Environment (cluster-wide; aggregate replicas with max).',
      ['environment_id'],
      () => this.queueSamples('age'),
    );
  }

  private async queueSamples(what: 'depth' | 'age') {
    const rows = await this.items.queueSamples(this.dataSource.manager);
    return rows.map((r) => ({
      labels: { environment_id: r.environment_id },
      value: what === 'depth' ? Number(r.depth) : Math.max(0, Number(r.age)),
    }));
  }

  // ── Workspace-key routes ─────────────────────────────────────────────────────────────────────────

  async create(p: Principal, environmentId: string, body: unknown): Promise<WorkView> {
    parseCreateBody(body);
    return this.dataSource.transaction(async (tx) => {
      const env = await this.environment(tx, p, environmentId);
      if (env.archivedAt) throw conflict(`environment ${env.id} is archived`);
      const now = await dbNow(tx);
      const lease = createHealthcheck(now);
      const row = tx.create(WorkItemEntity, {
        id: newId('work', now.getTime()),
        workspaceId: env.workspaceId,
        environmentId: env.id,
        kind: 'healthcheck',
        sessionId: null,
        metadata: {},
        tokenDigest: null,
        workerId: null,
        claimCount: 0,
        createdAt: now,
        ...leaseColumns(lease),
        expiresAt: lease.expiresAt,
      } as WorkItemEntity);
      await insertRow(tx, WorkItemEntity, row);
      await tx.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, env.id]);
      return renderWork(row);
    });
  }

  async retrieve(p: Principal, environmentId: string, workId: string): Promise<WorkView> {
    return this.dataSource.transaction(async (tx) => {
      await this.environment(tx, p, environmentId);
      return renderWork(await this.lockedItem(tx, environmentId, workId));
    });
  }

  async update(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const patch = parseUpdateBody(body);
    return this.dataSource.transaction(async (tx) => {
      await this.environment(tx, p, environmentId);
      const row = await this.lockedItem(tx, environmentId, workId);
      row.metadata = applyMetadataPatch(row.metadata, patch);
      await tx.update(WorkItemEntity, { id: row.id }, { metadata: row.metadata });
      return renderWork(row);
    });
  }

  async list(p: Principal, environmentId: string, query: Record<string, unknown>): Promise<Page<WorkView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    const scope = `work:${environmentId}`;
    const after =
      typeof query.page === 'string' ? decodeCursor(query.page, { scope, order: 'desc' }).after : undefined;
    return this.dataSource.transaction(async (tx) => {
      await this.environment(tx, p, environmentId);
      await this.items.reconcileEnvironment(tx, environmentId, await dbNow(tx));
      const qb = tx
        .createQueryBuilder(WorkItemEntity, 'w')
        .where('w.environment_id = :environmentId', { environmentId })
        .orderBy('w.id', 'DESC')
        .limit(limit + 1);
      if (after) qb.andWhere('w.id < :after', { after });
      return toPage(
        await qb.getMany(),
        limit,
        (w) => w.id,
        (w) => renderWork(w),
        { scope, order: 'desc' },
      );
    });
  }

  async stats(p: Principal, environmentId: string) {
    return this.dataSource.transaction(async (tx) => {
      if (p.kind === 'environment') {
        environmentPrincipal(p, environmentId);
        await this.items.holdKey(tx, p.keyId);
      } else await this.environment(tx, p, environmentId);
      const now = await dbNow(tx);
      await this.items.reconcileEnvironment(tx, environmentId, now);
      const stats = await this.items.queueStats(tx, environmentId, now);
      return {
        type: 'work_queue_stats' as const,
        depth: stats.depth,
        pending: stats.pending,
        oldest_queued_at: stats.oldest ? stats.oldest.toISOString() : null,
        workers_polling: stats.workersPolling,
      };
    });
  }

  /** The Environment, visible to this principal: another workspace's or a deleted one is 404. */
  async environment(tx: EntityManager, p: Principal, environmentId: string): Promise<EnvironmentEntity> {
    if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
    const env = await tx.findOne(EnvironmentEntity, {
      where: { id: environmentId, workspaceId: p.workspaceId, deletedAt: IsNull() },
    });
    if (!env) throw notFound('environment', environmentId);
    return env;
  }

  /** One item of the Environment locked FOR UPDATE, its deadline reconciled (persisted); 404 otherwise. */
  private async lockedItem(
    tx: EntityManager,
    environmentId: string,
    workId: string,
  ): Promise<WorkItemEntity> {
    if (!isId('work', workId)) throw notFound('work', workId);
    const row = await this.items.lockItem(tx, environmentId, workId, await dbNow(tx));
    if (!row) throw notFound('work', workId);
    return row;
  }
}
