import { Inject, Injectable } from '@nestjs/common';
import {
  applyMetadataPatch,
  conflict,
  DomainError,
  notFound,
  permissionDenied,
  unauthenticated,
} from '@mango/domain-kernel';
import {
  ack,
  claim,
  createHealthcheck,
  fail,
  heartbeat,
  recordResult,
  reconcileDeadline,
  stop,
  tokenAccess,
  WorkLease,
} from '@mango/domain-work-lease';
import { generateCredential, digestCredential, Principal } from '@mango/feature-auth';
import { isId, newId } from '@mango/platform-ids';
import { MangoMetrics } from '@mango/platform-metrics';
import { tracer } from '@mango/platform-tracing';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import {
  appendEvents,
  EnvironmentEntity,
  insertRow,
  SessionEntity,
  WorkItemEntity,
} from '@mango/persistence';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import {
  parseCreateBody,
  parseFailBody,
  parseHeartbeatQuery,
  parsePollQuery,
  parseResultBody,
  parseStopBody,
  parseUpdateBody,
} from './work-input';
import { leaseColumns, toLease } from './work-lease.mapper';
import { WORK_CHANNEL, WorkNotifier } from './work-notifier.service';

/** A claimable row another transaction held during Poll's SKIP LOCKED probe is looked at again this soon. */
const LOCKED_ROW_RETRY_MS = 20;
import { encodeWorkSecret } from './work-secret';
import { renderWork, WorkView } from './work.view';

type WorkPrincipal = Extract<Principal, { kind: 'work' }>;
type EnvPrincipal = Extract<Principal, { kind: 'environment' }>;

export const WORK_SETTINGS = Symbol('WORK_SETTINGS');
export interface WorkSettings {
  /** The base URL put into each Work secret as `api_base_url` (else the request's own origin). */
  publicBaseUrl?: string;
}

/**
 * The Environment Work protocol (seeds 002 and 003). Every transition is decided by the pure state
 * machine in @mango/domain-work-lease on a row locked FOR UPDATE, with PostgreSQL's clock; claims use
 * FOR UPDATE SKIP LOCKED; Poll and Ack hold the Environment key's row FOR SHARE so that a revocation
 * waits for them and, once committed, stops further claims and Acks.
 */
@Injectable()
export class WorkService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly notifier: WorkNotifier,
    @Inject(WORK_SETTINGS) private readonly settings: WorkSettings,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
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
    const rows: Array<{ environment_id: string; depth: number; age: number }> = await this.dataSource.query(
      `SELECT environment_id,
              count(*) FILTER (WHERE claimed_at IS NULL)::int AS depth,
              EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 AS age
         FROM work_items WHERE state = 'queued' AND (expires_at IS NULL OR expires_at > now())
        GROUP BY environment_id`,
    );
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
      const { row } = await this.lockedItem(tx, environmentId, workId);
      return renderWork(row);
    });
  }

  async update(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const patch = parseUpdateBody(body);
    return this.dataSource.transaction(async (tx) => {
      await this.environment(tx, p, environmentId);
      const { row } = await this.lockedItem(tx, environmentId, workId);
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
      await this.reconcileEnvironment(tx, environmentId, await dbNow(tx));
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

  // ── Environment-key routes ───────────────────────────────────────────────────────────────────────

  /**
   * Poll: claims the oldest claimable item (or reclaims a stale one) and returns it with a fresh
   * secret; `{}` when there is none after `block_ms`. Waiting is woken by NOTIFY, or by the moment the
   * next item becomes reclaimable — never by a fixed sleep. The key is re-checked on every attempt.
   */
  async poll(
    p: Principal,
    environmentId: string,
    query: Record<string, unknown>,
    workerHeader: unknown,
    origin: string,
  ): Promise<WorkView | Record<string, never>> {
    const input = parsePollQuery(query, workerHeader);
    const env = this.environmentPrincipal(p, environmentId);
    const deadline = Date.now() + input.blockMs;
    for (;;) {
      const subscription = input.blockMs > 0 ? this.notifier.subscribe(environmentId) : undefined;
      try {
        const attempt = await this.dataSource.transaction(async (tx) => {
          // One statement: the key held FOR SHARE (PostgreSQL's clock), the poller's last-seen time and
          // the overdue items to reconcile.
          const { now, overdue } = await this.holdKeyForPoll(tx, env, input.workerId);
          await this.reconcileEnvironment(tx, environmentId, now, overdue);
          const row = await this.claimable(tx, environmentId, now, input.reclaimOlderThanMs);
          if (!row) {
            return {
              work: null,
              nextWakeMs: await this.nextClaimableInMs(tx, environmentId, now, input.reclaimOlderThanMs),
            };
          }
          const reclaim =
            row.state === 'starting' || row.state === 'active'
              ? ('lease_expired' as const)
              : row.claimedAt
                ? ('tentative' as const)
                : ('none' as const);
          const { next } = claim(toLease(row), now, input.reclaimOlderThanMs);
          const token = generateCredential('workToken');
          const columns = {
            ...leaseColumns(next),
            tokenDigest: digestCredential(token),
            workerId: input.workerId,
            claimCount: row.claimCount + 1,
          };
          Object.assign(row, columns);
          await tx.update(WorkItemEntity, { id: row.id }, columns);
          const secret = encodeWorkSecret({
            sessions_token: token,
            api_base_url: this.settings.publicBaseUrl ?? origin,
          });
          return { work: renderWork(row, secret), nextWakeMs: 0, reclaim, workType: row.kind };
        });
        if (attempt.work) {
          // Counted once the claim committed.
          // A span for the claim itself (under the Poll request's span; no secret or token attributes).
          tracer()
            .startSpan('mango.environment.work.claim', {
              attributes: {
                'mango.environment.id': environmentId,
                'mango.work.id': attempt.work.id,
                'mango.work.type': attempt.workType!,
                'mango.work.reclaim': attempt.reclaim!,
              },
            })
            .end();
          const labels = { environment_id: environmentId, work_type: attempt.workType! };
          this.metrics.workClaims.inc({ ...labels, reclaim: attempt.reclaim! });
          if (attempt.reclaim === 'lease_expired') this.metrics.workLeaseExpiries.inc(labels);
          return attempt.work;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0 || !subscription) return {};
        await subscription.wait(Math.min(remaining, attempt.nextWakeMs ?? remaining));
      } finally {
        subscription?.close();
      }
    }
  }

  /** Ack: `queued` (claimed) → `starting`; repeating it after success is idempotent. */
  async ack(p: Principal, environmentId: string, workId: string): Promise<WorkView> {
    const env = this.environmentPrincipal(p, environmentId);
    // The key is held first and its check supplies the transaction's clock (one round trip fewer).
    return this.withItem(
      environmentId,
      workId,
      async (_tx, row, lease, now) => {
        const { next } = ack(lease, now);
        return { next, view: () => renderWork(row) };
      },
      (tx) => this.holdKey(tx, env),
    );
  }

  async stats(p: Principal, environmentId: string) {
    return this.dataSource.transaction(async (tx) => {
      if (p.kind === 'environment') {
        this.environmentPrincipal(p, environmentId);
        await this.holdKey(tx, p);
      } else await this.environment(tx, p, environmentId);
      const now = await dbNow(tx);
      await this.reconcileEnvironment(tx, environmentId, now);
      const [counts] = await tx.query(
        `SELECT count(*) FILTER (WHERE state = 'queued' AND claimed_at IS NULL)::int AS depth,
                count(*) FILTER (WHERE state = 'queued' AND claimed_at IS NOT NULL)::int AS pending,
                min(created_at) FILTER (WHERE state = 'queued') AS oldest
           FROM work_items WHERE environment_id = $1`,
        [environmentId],
      );
      const [pollers] = await tx.query(
        `SELECT count(*)::int AS n FROM work_pollers WHERE environment_id = $1 AND last_seen_at > $2`,
        [environmentId, new Date(now.getTime() - 30_000)],
      );
      return {
        type: 'work_queue_stats' as const,
        depth: counts.depth as number,
        pending: counts.pending as number,
        oldest_queued_at: counts.oldest ? new Date(counts.oldest).toISOString() : null,
        workers_polling: pollers.n as number,
      };
    });
  }

  // ── Work-token routes ────────────────────────────────────────────────────────────────────────────

  async heartbeat(p: Principal, environmentId: string, workId: string, query: Record<string, unknown>) {
    const input = parseHeartbeatQuery(query);
    const token = this.workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      checkDigest(row, token);
      const { next, response } = heartbeat(lease, input, now);
      return { next, view: () => ({ type: 'work_heartbeat' as const, ...response }) };
    });
  }

  async result(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const input = parseResultBody(body);
    const token = this.workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      checkDigest(row, token);
      requireToken(lease, now, 'result');
      const { next } = recordResult(lease, input, now);
      return { next, view: () => renderWork(row) };
    });
  }

  async fail(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const message = parseFailBody(body);
    const token = this.workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (tx, row, lease, now) => {
      checkDigest(row, token);
      requireToken(lease, now, 'fail');
      const { next } = fail(lease, message, now);
      if (row.sessionId) await terminateSession(tx, row.sessionId, message, now);
      return { next, view: () => renderWork(row) };
    });
  }

  /** Stop: Workspace key (operator authority) or the Work's own live token; 204 either way. */
  async stop(p: Principal, environmentId: string, workId: string, body: unknown): Promise<void> {
    const input = parseStopBody(body);
    if (p.kind === 'work') this.workPrincipal(p, environmentId, workId);
    else await this.dataSource.transaction((tx) => this.environment(tx, p, environmentId));
    await this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      if (p.kind === 'work') {
        checkDigest(row, p);
        requireToken(lease, now, 'stop');
      }
      const { next } = stop(lease, input, now);
      return { next, view: () => undefined };
    });
  }

  // ── Helpers ──────────────────────────────────────────────────────────────────────────────────────

  /**
   * Runs one transition on a row locked FOR UPDATE. Lazy deadline reconciliation is committed even
   * when the transition itself is refused, so a refused request still leaves the truthful state.
   */
  private async withItem<T>(
    environmentId: string,
    workId: string,
    transition: (
      tx: EntityManager,
      row: WorkItemEntity,
      lease: WorkLease,
      now: Date,
    ) => Promise<{ next: WorkLease; view: () => T }>,
    /** Runs first in the transaction and returns PostgreSQL's clock (e.g. holding the Environment key). */
    first?: (tx: EntityManager) => Promise<Date>,
  ): Promise<T> {
    let refusal: unknown;
    const out = await this.dataSource.transaction(async (tx) => {
      const clock = first ? await first(tx) : undefined;
      const { row, now } = await this.lockedItem(tx, environmentId, workId, clock);
      try {
        const before = row.state;
        const { next, view } = await transition(tx, row, toLease(row), now);
        const columns = leaseColumns(next);
        Object.assign(row, columns);
        await tx.update(WorkItemEntity, { id: row.id }, columns);
        if (row.sessionId && before !== 'stopped' && row.state === 'stopped')
          await continueSessionWork(tx, row.sessionId, now);
        return view();
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        refusal = e;
        return undefined;
      }
    });
    if (refusal) throw refusal;
    return out as T;
  }

  /** Locks one item of the Environment, reconciles its deadline (persisted) and returns it with DB time. */
  private async lockedItem(
    tx: EntityManager,
    environmentId: string,
    workId: string,
    clock?: Date,
  ): Promise<{ row: WorkItemEntity; now: Date }> {
    if (!isId('work', workId)) throw notFound('work', workId);
    const now = clock ?? (await dbNow(tx));
    const row = await tx.findOne(WorkItemEntity, {
      where: { id: workId, environmentId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!row) throw notFound('work', workId);
    const { next, changed } = reconcileDeadline(toLease(row), now);
    if (changed) {
      const columns = leaseColumns(next);
      Object.assign(row, columns);
      await tx.update(WorkItemEntity, { id: row.id }, columns);
    }
    return { row, now };
  }

  /**
   * The item Poll may claim, locked FOR UPDATE SKIP LOCKED (the SQL mirrors `isClaimable`): first a lost
   * `starting`/`active` lease (an activation that already waited), else the oldest queued item that is
   * unclaimed or whose tentative claim is older than `reclaim_older_than_ms`. Each probe is one small
   * partial index scan.
   */
  private async claimable(tx: EntityManager, environmentId: string, now: Date, reclaimOlderThanMs: number) {
    const lost = await tx
      .createQueryBuilder(WorkItemEntity, 'w')
      .where(
        "w.environment_id = :environmentId AND w.state IN ('starting', 'active') AND w.lease_expires_at <= :now",
        { environmentId, now },
      )
      .andWhere('(w.expires_at IS NULL OR w.expires_at > :now)', { now })
      .orderBy('w.lease_expires_at')
      .limit(1)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
    if (lost) return lost;
    return tx
      .createQueryBuilder(WorkItemEntity, 'w')
      .where("w.environment_id = :environmentId AND w.state = 'queued'", { environmentId })
      .andWhere('(w.claimed_at IS NULL OR w.claimed_at <= :cutoff)', {
        cutoff: new Date(now.getTime() - reclaimOlderThanMs),
      })
      .andWhere('(w.expires_at IS NULL OR w.expires_at > :now)', { now })
      .orderBy('w.created_at')
      .addOrderBy('w.id')
      .limit(1)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
  }

  /** Reconciles every overdue item of an Environment (Get/List/Poll/Stats touch the whole queue). */
  private async reconcileEnvironment(
    tx: EntityManager,
    environmentId: string,
    now: Date,
    /** The overdue ids when the caller already looked them up (Poll, with the key check). */
    known?: string[],
  ): Promise<void> {
    const ids: string[] =
      known ??
      ((await tx.query(overdueSql('$1', '$2'), [environmentId, now])) as Array<{ id: string }>).map(
        (r) => r.id,
      );
    for (const id of ids) {
      const row = await tx.findOne(WorkItemEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
      });
      if (!row) continue; // another request is reconciling or transitioning it right now
      const { next, changed } = reconcileDeadline(toLease(row), now);
      if (changed) await tx.update(WorkItemEntity, { id }, leaseColumns(next));
    }
  }

  /** Milliseconds until the next item of the Environment becomes claimable by time alone, if any. */
  private async nextClaimableInMs(
    tx: EntityManager,
    environmentId: string,
    now: Date,
    reclaimOlderThanMs: number,
  ): Promise<number | undefined> {
    // When an item becomes claimable: queued ones now (or when their unacked claim may be reclaimed),
    // active ones when their lease runs out. One that is claimable already was skipped only because
    // another transaction held its row (SKIP LOCKED, e.g. a concurrent read reconciling it): look again
    // shortly instead of sleeping until the long poll ends.
    const [row] = await tx.query(
      `SELECT min(at) AS at FROM (
         SELECT coalesce(claimed_at + make_interval(secs => $3::double precision / 1000), $2) AS at FROM work_items
          WHERE environment_id = $1 AND state = 'queued' AND (expires_at IS NULL OR expires_at > $2)
         UNION ALL
         SELECT lease_expires_at FROM work_items
          WHERE environment_id = $1 AND state IN ('starting', 'active') AND (expires_at IS NULL OR expires_at > $2)
       ) t`,
      [environmentId, now, reclaimOlderThanMs],
    );
    if (!row?.at) return undefined;
    const inMs = new Date(row.at).getTime() - now.getTime();
    return inMs <= 0 ? LOCKED_ROW_RETRY_MS : inMs + 5;
  }

  /** The Environment, visible to this principal: another workspace's or a deleted one is 404. */
  private async environment(
    tx: EntityManager,
    p: Principal,
    environmentId: string,
  ): Promise<EnvironmentEntity> {
    if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
    const env = await tx.findOne(EnvironmentEntity, {
      where: { id: environmentId, workspaceId: p.workspaceId, deletedAt: IsNull() },
    });
    if (!env) throw notFound('environment', environmentId);
    return env;
  }

  private environmentPrincipal(p: Principal, environmentId: string): EnvPrincipal {
    if (p.kind !== 'environment') throw permissionDenied('Poll and Ack need the Environment key');
    if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
    if (p.environmentId !== environmentId)
      throw permissionDenied('this Environment key belongs to another Environment');
    return p;
  }

  private workPrincipal(p: Principal, environmentId: string, workId: string): WorkPrincipal {
    if (p.kind !== 'work') throw permissionDenied('only the Work token may do this');
    if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
    if (!isId('work', workId)) throw notFound('work', workId);
    if (p.environmentId !== environmentId || p.workId !== workId)
      throw permissionDenied('this Work token belongs to another Work item');
    return p;
  }

  /**
   * Holds the Environment key FOR SHARE for the rest of the transaction: revocation (an UPDATE of the
   * row) waits for us, and after it commits this check fails.
   */
  private async holdKey(tx: EntityManager, p: EnvPrincipal): Promise<Date> {
    const rows = await tx.query(
      `SELECT now() AS now FROM api_keys k JOIN environments e ON e.id = k.environment_id
        WHERE k.id = $1 AND k.revoked_at IS NULL AND e.deleted_at IS NULL
        FOR SHARE OF k`,
      [p.keyId],
    );
    if (rows.length === 0) throw unauthenticated('the Environment key was revoked');
    return new Date(rows[0].now);
  }

  /**
   * Poll's first statement: holdKey, and — only while the key is valid — the poller's last-seen time
   * (with a worker id) and the Environment's overdue items, in one round trip.
   */
  private async holdKeyForPoll(
    tx: EntityManager,
    p: EnvPrincipal,
    workerId: string | null,
  ): Promise<{ now: Date; overdue: string[] }> {
    const rows: Array<{ now: Date; overdue: string[] | null }> = await tx.query(
      `WITH k AS (
         SELECT now() AS now FROM api_keys k JOIN environments e ON e.id = k.environment_id
          WHERE k.id = $1 AND k.revoked_at IS NULL AND e.deleted_at IS NULL
          FOR SHARE OF k),
       seen AS (
         INSERT INTO work_pollers (environment_id, worker_id, last_seen_at)
         SELECT $2, $3, now FROM k WHERE $3::text IS NOT NULL
         ON CONFLICT (environment_id, worker_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at)
       SELECT k.now, (SELECT array_agg(o.id) FROM (${overdueSql('$2', 'k.now')}) o) AS overdue FROM k`,
      [p.keyId, p.environmentId, workerId],
    );
    if (rows.length === 0) throw unauthenticated('the Environment key was revoked');
    return { now: new Date(rows[0]!.now), overdue: rows[0]!.overdue ?? [] };
  }
}

/** Items of an Environment whose deadline passed at `now` (healthchecks past expiry, stops past their lease). */
const overdueSql = (environment: string, now: string) =>
  `SELECT id FROM work_items WHERE environment_id = ${environment} AND kind = 'healthcheck' AND state <> 'stopped' AND expires_at <= ${now}
   UNION SELECT id FROM work_items WHERE environment_id = ${environment} AND state = 'stopping' AND lease_expires_at <= ${now}`;

async function dbNow(tx: EntityManager): Promise<Date> {
  const [row] = await tx.query('SELECT now() AS now');
  return new Date(row.now);
}

/** A dead token is refused (401) before any input rule is looked at, whatever the route. */
function requireToken(lease: WorkLease, now: Date, operation: 'result' | 'fail' | 'stop'): void {
  const access = tokenAccess(lease, now, operation);
  if (!access.allowed) throw access.error;
}

/** The token must be the item's current one: a reclaim rotates the digest, so an old owner is 401. */
function checkDigest(row: WorkItemEntity, p: WorkPrincipal): void {
  if (!row.tokenDigest || !row.tokenDigest.equals(p.tokenDigest))
    throw unauthenticated('the Work token is no longer valid (the Work was reclaimed)');
}

/**
 * A permanent input failure reported by the worker ends its Session in the Fail transaction (decisions,
 * "Fail"): `session.error` (`session_input_failed_error`, terminal) and `session.status_terminated`.
 */
async function terminateSession(
  tx: EntityManager,
  sessionId: string,
  message: string,
  now: Date,
): Promise<void> {
  const session = await tx.findOne(SessionEntity, {
    where: { id: sessionId },
    lock: { mode: 'pessimistic_write' },
  });
  if (!session || session.deletedAt || session.status === 'terminated') return;
  session.status = 'terminated';
  await tx.update(SessionEntity, { id: session.id }, { status: 'terminated' });
  await appendEvents(
    tx,
    session,
    [
      {
        type: 'session.error',
        body: { error: { type: 'session_input_failed_error', message, retry_status: { type: 'terminal' } } },
        processed: true,
        runnable: false,
      },
      { type: 'session.status_terminated', body: {}, processed: true, runnable: false },
    ],
    now,
  );
}

/**
 * A Session still running when its Work item stops (input or a tool call that coalesced into the item
 * just before the worker's final Stop, or an operator's Stop mid-turn) gets a new queued item in the
 * same transaction, so the turn is never left without a worker. Idle, terminated or deleted Sessions get
 * none: their next runnable input creates one.
 */
async function continueSessionWork(tx: EntityManager, sessionId: string, now: Date): Promise<void> {
  await tx.query(
    `WITH s AS (
       SELECT id, workspace_id, environment_id FROM sessions
        WHERE id = $1 AND deleted_at IS NULL AND status IN ('running', 'rescheduling')),
     w AS (
       INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       SELECT $2, workspace_id, environment_id, 'session', id, 'queued', '{}', $3 FROM s
       ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING
       RETURNING environment_id)
     SELECT pg_notify('${WORK_CHANNEL}', environment_id) FROM w`,
    [sessionId, newId('work', now.getTime()), now],
  );
}
