import { unauthenticated } from '@mango/domain-kernel';
import {
  ackTransition,
  claimSources,
  reconcileDeadline,
  stop,
  tokenAccess,
  type TokenOperation,
  type WorkLease,
} from '@mango/domain-work-lease';
import { newId } from '@mango/platform-ids';
import type { EntityManager } from 'typeorm';
import { WorkItemEntity } from './entities';
import { runStatement, type StatementTarget } from './prepared-statement';
import { leaseColumns, toLease } from './work-item.mapper';

/**
 * The Work item aggregate's SQL (ADR 0008; `docs/architecture.md`). Every state change is decided by the
 * pure lease state machine in `@mango/domain-work-lease` and only persisted here; nothing else writes
 * `work_items`. Each function takes the caller's `EntityManager`, so it runs inside the caller's
 * transaction (Nest services and plain code alike); time is always PostgreSQL's clock.
 */

/** NOTIFY channel on which a new or re-queued item says "look now" to long polls (payload: Environment id). */
export const WORK_CHANNEL = 'mango_work';

/** The one refusal for a token that is not (or no longer) the Work item's current one. */
export const STALE_WORK_TOKEN = 'the Work token is no longer valid';

/** The token a Work principal presented, as the auth guard resolved it. */
export interface PresentedWorkToken {
  workId: string;
  tokenDigest: Buffer;
}

/**
 * The one rule "a Work token may do `operation` only with its item's current token and live lease":
 * the digest must be the item's current one (a reclaim rotates it, so an old owner is refused), then the
 * lease state machine's `tokenAccess` decides (401, or 412 for an expired heartbeat).
 */
export function requireTokenAccess(
  row: Pick<WorkItemEntity, 'tokenDigest'> | null | undefined,
  tokenDigest: Buffer,
  lease: Parameters<typeof tokenAccess>[0] | null,
  now: Date,
  operation: TokenOperation | null,
  staleMessage: string = STALE_WORK_TOKEN,
): void {
  if (!row || !row.tokenDigest || !row.tokenDigest.equals(tokenDigest)) throw unauthenticated(staleMessage);
  if (operation === null || lease === null) return;
  const access = tokenAccess(lease, now, operation);
  if (!access.allowed) throw access.error;
}

/**
 * The live-lease check for a Work token that writes (tool results, Memory writes): the item row is held
 * `FOR SHARE` until the caller's transaction commits, so a concurrent reclaim or Stop waits for the write
 * (and after it commits, this check fails). With `sessionId`, the item must also be that Session's.
 * One round trip: the row and PostgreSQL's clock together.
 */
export async function requireLiveLease(
  em: EntityManager,
  token: PresentedWorkToken,
  sessionId?: string | null,
  operation: TokenOperation = 'session_write',
): Promise<void> {
  // Raw SQL: FOR SHARE also works on a bare manager (autocommit: a pre-check outside the write).
  const [row]: LiveLeaseRow[] = await em.query(
    `SELECT token_digest, session_id, kind, state, claimed_at, acknowledged_at, started_at,
            latest_heartbeat_at, lease_expires_at, ttl_seconds, stop_requested_at, stopped_at, expires_at,
            result, result_recorded_at, now() AS db_now
       FROM work_items WHERE id = $1 FOR SHARE`,
    [token.workId],
  );
  if (row && sessionId !== undefined && row.session_id !== sessionId) throw unauthenticated(STALE_WORK_TOKEN);
  const lease: WorkLease | null = row
    ? {
        kind: row.kind,
        state: row.state,
        claimedAt: row.claimed_at,
        acknowledgedAt: row.acknowledged_at,
        startedAt: row.started_at,
        latestHeartbeatAt: row.latest_heartbeat_at,
        leaseExpiresAt: row.lease_expires_at,
        ttlSeconds: row.ttl_seconds,
        stopRequestedAt: row.stop_requested_at,
        stoppedAt: row.stopped_at,
        expiresAt: row.expires_at,
        result: row.result,
        resultRecordedAt: row.result_recorded_at,
      }
    : null;
  requireTokenAccess(
    row ? { tokenDigest: row.token_digest } : null,
    token.tokenDigest,
    lease,
    new Date(row?.db_now ?? 0),
    operation,
  );
}

interface LiveLeaseRow {
  token_digest: Buffer | null;
  session_id: string | null;
  kind: WorkLease['kind'];
  state: WorkLease['state'];
  claimed_at: Date | null;
  acknowledged_at: Date | null;
  started_at: Date | null;
  latest_heartbeat_at: Date | null;
  lease_expires_at: Date | null;
  ttl_seconds: number | null;
  stop_requested_at: Date | null;
  stopped_at: Date | null;
  expires_at: Date | null;
  result: WorkLease['result'];
  result_recorded_at: Date | null;
  db_now: Date;
}

/** The item a Work token belongs to (by digest) with PostgreSQL's clock, or null: the auth guard's lookup. */
export async function findByTokenDigest(
  em: EntityManager,
  tokenDigest: Buffer,
): Promise<{ row: WorkItemEntity; now: Date } | null> {
  const { entities, raw } = await em
    .createQueryBuilder(WorkItemEntity, 'w')
    .addSelect('now()', 'db_now')
    .where('w.token_digest = :digest', { digest: tokenDigest })
    .getRawAndEntities<{ db_now: Date }>();
  const row = entities[0];
  return row ? { row, now: new Date(raw[0]!.db_now) } : null;
}

/**
 * Creates the Session's live Work item, or coalesces into the one that exists (the partial unique index
 * on `session_id` over items not yet stopped), and NOTIFYs the Environment's long polls on commit.
 * Returns the new item's id, or null when it coalesced.
 */
export async function ensureSessionWork(
  em: EntityManager,
  session: { id: string; workspaceId: string; environmentId: string },
  now: Date,
): Promise<string | null> {
  const rows: Array<{ id: string }> = await em.query(
    `WITH w AS (
       INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       VALUES ($1, $2, $3, 'session', $4, 'queued', '{}', $5)
       ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING RETURNING id)
     SELECT id, pg_notify($6, $3) FROM w`,
    [newId('work', now.getTime()), session.workspaceId, session.environmentId, session.id, now, WORK_CHANNEL],
  );
  return rows[0]?.id ?? null;
}

/**
 * A Session still running when its Work item stops (input or a tool call that coalesced into the item
 * just before the worker's final Stop, or an operator's Stop mid-turn) gets a new queued item in the
 * same transaction, so the turn is never left without a worker. Idle, terminated or deleted Sessions get
 * none: their next runnable input creates one (`ensureSessionWork`).
 */
export async function continueSessionWork(
  em: EntityManager,
  sessionId: string,
  now: Date,
): Promise<string | null> {
  const rows: Array<{ id: string }> = await em.query(
    `WITH s AS (
       SELECT id, workspace_id, environment_id FROM sessions
        WHERE id = $1 AND deleted_at IS NULL AND status IN ('running', 'rescheduling')),
     w AS (
       INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       SELECT $2, workspace_id, environment_id, 'session', id, 'queued', '{}', $3 FROM s
       ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING
       RETURNING id, environment_id)
     SELECT id, pg_notify($4, environment_id) FROM w`,
    [sessionId, newId('work', now.getTime()), now, WORK_CHANNEL],
  );
  return rows[0]?.id ?? null;
}

/**
 * Stops every live Work item of a Session (its deletion) through the lease state machine's forced Stop,
 * on rows locked FOR UPDATE: the token dies with it and the worker's next heartbeat is refused. No new
 * item follows (the caller deletes the Session). Returns the ids it stopped.
 */
export async function stopSessionWork(em: EntityManager, sessionId: string, now: Date): Promise<string[]> {
  const rows = await em
    .createQueryBuilder(WorkItemEntity, 'w')
    .where("w.session_id = :sessionId AND w.state <> 'stopped'", { sessionId })
    .setLock('pessimistic_write')
    .getMany();
  const stopped: string[] = [];
  for (const row of rows) {
    const { next, changed } = stop(toLease(row), { force: true }, now);
    if (!changed) continue;
    await em.update(WorkItemEntity, { id: row.id }, leaseColumns(next));
    stopped.push(row.id);
  }
  return stopped;
}

/** A claimable row another transaction held during Poll's SKIP LOCKED probe is looked at again this soon. */
export const LOCKED_ROW_RETRY_MS = 20;

/** Items of an Environment whose deadline passed at `now` (healthchecks past expiry, stops past their lease). */
const overdueSql = (environment: string, now: string) =>
  `SELECT id FROM work_items WHERE environment_id = ${environment} AND kind = 'healthcheck' AND state <> 'stopped' AND expires_at <= ${now}
   UNION SELECT id FROM work_items WHERE environment_id = ${environment} AND state = 'stopping' AND lease_expires_at <= ${now}`;

const sqlStates = (states: readonly string[]) => states.map((st) => `'${st}'`).join(', ');
/** The sources of a claim and an Ack, computed once from the lease state machine. */
const CLAIM = claimSources();
const ACK = ackTransition();

/**
 * What a Work item's wire form reads (`renderWork`): the one-statement claim and Ack return only these
 * columns. node-postgres builds a parser per column and field per row on every execution, so the eight
 * columns no response shows (the workspace, token digest, worker, claim count and the lease bookkeeping)
 * were CPU spent on each Poll and Ack for nothing.
 */
export type WorkItemView = Pick<
  WorkItemEntity,
  | 'id'
  | 'environmentId'
  | 'kind'
  | 'sessionId'
  | 'state'
  | 'metadata'
  | 'result'
  | 'expiresAt'
  | 'createdAt'
  | 'acknowledgedAt'
  | 'startedAt'
  | 'latestHeartbeatAt'
  | 'stopRequestedAt'
  | 'stoppedAt'
>;

/** The view's columns by name (never `*`: prepared statements keep their result type). */
const VIEW_COLUMNS = [
  'id',
  'environment_id',
  'kind',
  'session_id',
  'state',
  'metadata',
  'result',
  'expires_at',
  'created_at',
  'acknowledged_at',
  'started_at',
  'latest_heartbeat_at',
  'stop_requested_at',
  'stopped_at',
] as const;
const returning = (alias: string) => VIEW_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

/** A returned row (snake_case, as node-postgres gives it) as the view. */
function viewOf(r: Record<string, any>): WorkItemView {
  return {
    id: r.id,
    environmentId: r.environment_id,
    kind: r.kind,
    sessionId: r.session_id,
    state: r.state,
    metadata: r.metadata,
    result: r.result,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    acknowledgedAt: r.acknowledged_at,
    startedAt: r.started_at,
    latestHeartbeatAt: r.latest_heartbeat_at,
    stopRequestedAt: r.stop_requested_at,
    stoppedAt: r.stopped_at,
  };
}

/** What the one-statement claim did. */
export type ClaimOutcome =
  | { kind: 'revoked' }
  /** Overdue items must be reconciled first: the caller takes the transactional path. */
  | { kind: 'overdue'; now: Date; overdue: string[] }
  | { kind: 'none'; now: Date }
  | {
      kind: 'claimed';
      now: Date;
      row: WorkItemView;
      previous: { state: WorkLease['state']; claimedAt: Date | null };
    };

/**
 * The Environment key held FOR SHARE (a revocation's UPDATE waits for the statement's transaction, and
 * once committed makes this return no row), with PostgreSQL's clock truncated to the columns' millisecond
 * precision. `now()` is written out (not the CTE's column) where an index scan needs it as a bound.
 */
const KEY_CTE = `k AS (
       SELECT date_trunc('milliseconds', now()) AS now FROM api_keys k JOIN environments e ON e.id = k.environment_id
        WHERE k.id = $1 AND k.revoked_at IS NULL AND e.deleted_at IS NULL
        FOR SHARE OF k)`;

const CLAIM_ONE_SQL = `WITH ${KEY_CTE},
     seen AS (
       INSERT INTO work_pollers (environment_id, worker_id, last_seen_at)
       SELECT $2, $3, now FROM k WHERE $3::text IS NOT NULL
       ON CONFLICT (environment_id, worker_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at),
     od AS (SELECT (SELECT array_agg(o.id) FROM (${overdueSql('$2', 'k.now')}) o) AS ids FROM k),
     lost AS (
       SELECT w.id, w.state, w.claimed_at FROM work_items w, k, od
        WHERE od.ids IS NULL AND w.environment_id = $2 AND w.state IN (${sqlStates(CLAIM.lostLease)})
          AND w.lease_expires_at <= date_trunc('milliseconds', now())
          AND (w.expires_at IS NULL OR w.expires_at > k.now)
        ORDER BY w.lease_expires_at LIMIT 1 FOR UPDATE OF w SKIP LOCKED),
     fresh AS (
       SELECT w.id, w.state, w.claimed_at FROM work_items w, k, od
        WHERE od.ids IS NULL AND NOT EXISTS (SELECT 1 FROM lost) AND w.environment_id = $2
          AND ((w.state IN (${sqlStates(CLAIM.unclaimed)}) AND w.claimed_at IS NULL)
            OR (w.state IN (${sqlStates(CLAIM.staleClaim)})
                AND w.claimed_at <= k.now - make_interval(secs => $4::double precision / 1000)))
          AND (w.expires_at IS NULL OR w.expires_at > k.now)
        ORDER BY w.created_at, w.id LIMIT 1 FOR UPDATE OF w SKIP LOCKED),
     c AS (SELECT * FROM lost UNION ALL SELECT * FROM fresh),
     u AS (
       UPDATE work_items w
          SET state = 'queued', claimed_at = k.now, acknowledged_at = NULL, latest_heartbeat_at = NULL,
              lease_expires_at = NULL, ttl_seconds = NULL, token_digest = $5, worker_id = $3,
              claim_count = w.claim_count + 1
         FROM c, k WHERE w.id = c.id
       RETURNING ${returning('w')}, c.state AS previous_state, c.claimed_at AS previous_claimed_at)
     SELECT k.now AS db_now, od.ids AS overdue, ${returning('u')}, u.previous_state, u.previous_claimed_at
       FROM k CROSS JOIN od LEFT JOIN u ON true`;

/**
 * Poll's claim as one statement (one round trip, its own transaction; a named prepared statement when
 * given the DataSource): the Environment key held FOR SHARE, the poller's last-seen time, the overdue
 * check, and — only when nothing is overdue — the claim of one item locked FOR UPDATE SKIP LOCKED: a
 * lost lease first (oldest expiry, an index range scan however many leases are live), else the oldest
 * unclaimed or stale queued item. The source states come from `claimSources()`; the columns set are
 * exactly `claim()`'s (back to `queued`, a fresh claim time, no Ack, heartbeat or lease) plus the new
 * token's digest, the worker and the claim count.
 */
export async function claimOne(
  db: StatementTarget,
  args: {
    keyId: string;
    environmentId: string;
    workerId: string | null;
    reclaimOlderThanMs: number;
    tokenDigest: Buffer;
  },
): Promise<ClaimOutcome> {
  const rows = await runStatement<Record<string, any>>(db, 'mango_work_claim_one', CLAIM_ONE_SQL, [
    args.keyId,
    args.environmentId,
    args.workerId,
    args.reclaimOlderThanMs,
    args.tokenDigest,
  ]);
  const r = rows[0];
  if (!r) return { kind: 'revoked' };
  const now = new Date(r.db_now);
  if (r.overdue) return { kind: 'overdue', now, overdue: r.overdue };
  if (!r.id) return { kind: 'none', now };
  return {
    kind: 'claimed',
    now,
    row: viewOf(r),
    previous: { state: r.previous_state, claimedAt: r.previous_claimed_at },
  };
}

const ACK_ONE_SQL = `WITH ${KEY_CTE},
     u AS (UPDATE work_items w
        SET state = '${ACK.to}', acknowledged_at = k.now,
            lease_expires_at = k.now + make_interval(secs => ${ACK.leaseSeconds}), ttl_seconds = ${ACK.leaseSeconds}
       FROM k
      WHERE w.id = $2 AND w.environment_id = $3 AND w.state IN (${sqlStates(ACK.from)})
        AND w.claimed_at IS NOT NULL AND (w.expires_at IS NULL OR w.expires_at > k.now)
     RETURNING ${returning('w')})
     SELECT * FROM u`;

/**
 * Ack's common case as one statement (a named prepared statement when given the DataSource): with the
 * Environment key held FOR SHARE, a claimed, not overdue item in one of `ackTransition().from` moves to
 * `starting` with the starting lease (exactly `ack()`). Anything else (a repeat, a refusal, an overdue
 * item, a revoked key) returns null and the caller runs the transactional path, which gives the state
 * machine's own answer.
 */
export async function ackOne(
  db: StatementTarget,
  args: { keyId: string; environmentId: string; workId: string },
): Promise<WorkItemView | null> {
  const rows = await runStatement<Record<string, any>>(db, 'mango_work_ack_one', ACK_ONE_SQL, [
    args.keyId,
    args.workId,
    args.environmentId,
  ]);
  return rows[0] ? viewOf(rows[0]) : null;
}

/**
 * When an item becomes claimable: queued ones now (or when their unacked claim may be reclaimed), active
 * ones when their lease runs out. One that is claimable already was skipped only because another
 * transaction held its row (SKIP LOCKED, e.g. a concurrent read reconciling it): the caller looks again
 * shortly instead of sleeping until the long poll ends.
 */
const NEXT_CLAIMABLE_SQL = `SELECT min(at) AS at FROM (
         SELECT coalesce(claimed_at + make_interval(secs => $3::double precision / 1000), $2) AS at FROM work_items
          WHERE environment_id = $1 AND state = 'queued' AND (expires_at IS NULL OR expires_at > $2)
         UNION ALL
         SELECT lease_expires_at FROM work_items
          WHERE environment_id = $1 AND state IN ('starting', 'active') AND (expires_at IS NULL OR expires_at > $2)
       ) t`;

/** PostgreSQL's clock, the only clock lease rules are evaluated against. */
export async function dbNow(em: EntityManager): Promise<Date> {
  const [row] = await em.query('SELECT now() AS now');
  return new Date(row.now);
}

/**
 * The Work item repository as a class for the Environment Work routes (stateless: `new
 * WorkItemRepository()` from Nest or plain code). Every method runs in the caller's transaction.
 */
export class WorkItemRepository {
  /** Locks one item of the Environment, reconciles its deadline (persisted) and returns it with DB time. */
  async lockItem(
    em: EntityManager,
    environmentId: string,
    workId: string,
    now: Date,
  ): Promise<WorkItemEntity | null> {
    const row = await em.findOne(WorkItemEntity, {
      where: { id: workId, environmentId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!row) return null;
    const { next, changed } = reconcileDeadline(toLease(row), now);
    if (changed) await this.saveLease(em, row, next);
    return row;
  }

  /** Persists a lease the state machine computed (and mirrors it onto the loaded row). */
  async saveLease(em: EntityManager, row: WorkItemEntity, lease: WorkLease): Promise<void> {
    const columns = leaseColumns(lease);
    Object.assign(row, columns);
    await em.update(WorkItemEntity, { id: row.id }, columns);
  }

  /**
   * The item Poll may claim, locked FOR UPDATE SKIP LOCKED (the SQL mirrors `isClaimable`): first a lost
   * `starting`/`active` lease (an activation that already waited), else the oldest queued item that is
   * unclaimed or whose tentative claim is older than `reclaim_older_than_ms`. Each probe is one small
   * partial index scan.
   */
  async claimable(em: EntityManager, environmentId: string, now: Date, reclaimOlderThanMs: number) {
    const lost = await em
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
    return em
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

  /** Stores a claim the state machine computed, with the new token's digest and the claiming worker. */
  async saveClaim(
    em: EntityManager,
    row: WorkItemEntity,
    lease: WorkLease,
    tokenDigest: Buffer,
    workerId: string | null,
  ): Promise<void> {
    const columns = { ...leaseColumns(lease), tokenDigest, workerId, claimCount: row.claimCount + 1 };
    Object.assign(row, columns);
    await em.update(WorkItemEntity, { id: row.id }, columns);
  }

  /** Reconciles every overdue item of an Environment (Get/List/Poll/Stats touch the whole queue). */
  async reconcileEnvironment(
    em: EntityManager,
    environmentId: string,
    now: Date,
    /** The overdue ids when the caller already looked them up (Poll, with the key check). */
    known?: string[],
  ): Promise<void> {
    const ids: string[] =
      known ??
      ((await em.query(overdueSql('$1', '$2'), [environmentId, now])) as Array<{ id: string }>).map(
        (r) => r.id,
      );
    for (const id of ids) {
      const row = await em.findOne(WorkItemEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
      });
      if (!row) continue; // another request is reconciling or transitioning it right now
      const { next, changed } = reconcileDeadline(toLease(row), now);
      if (changed) await em.update(WorkItemEntity, { id }, leaseColumns(next));
    }
  }

  /**
   * Milliseconds until the next item of the Environment becomes claimable by time alone, if any. On the
   * DataSource (an empty long poll's attempt) a named prepared statement; on a manager, in its transaction.
   */
  async nextClaimableInMs(
    db: StatementTarget,
    environmentId: string,
    now: Date,
    reclaimOlderThanMs: number,
  ): Promise<number | undefined> {
    const [row] = await runStatement<{ at: Date | null }>(
      db,
      'mango_work_next_claimable',
      NEXT_CLAIMABLE_SQL,
      [environmentId, now, reclaimOlderThanMs],
    );
    if (!row?.at) return undefined;
    const inMs = new Date(row.at).getTime() - now.getTime();
    return inMs <= 0 ? LOCKED_ROW_RETRY_MS : inMs + 5;
  }

  /**
   * Holds the Environment key FOR SHARE for the rest of the transaction: revocation (an UPDATE of the
   * row) waits for us, and after it commits this check fails. Returns PostgreSQL's clock.
   */
  async holdKey(em: EntityManager, keyId: string): Promise<Date> {
    const rows = await em.query(
      `SELECT now() AS now FROM api_keys k JOIN environments e ON e.id = k.environment_id
        WHERE k.id = $1 AND k.revoked_at IS NULL AND e.deleted_at IS NULL
        FOR SHARE OF k`,
      [keyId],
    );
    if (rows.length === 0) throw unauthenticated('the Environment key was revoked');
    return new Date(rows[0].now);
  }

  /**
   * Poll's first statement: holdKey, and — only while the key is valid — the poller's last-seen time
   * (with a worker id) and the Environment's overdue items, in one round trip.
   */
  async holdKeyForPoll(
    em: EntityManager,
    keyId: string,
    environmentId: string,
    workerId: string | null,
  ): Promise<{ now: Date; overdue: string[] }> {
    const rows: Array<{ now: Date; overdue: string[] | null }> = await em.query(
      `WITH k AS (
         SELECT now() AS now FROM api_keys k JOIN environments e ON e.id = k.environment_id
          WHERE k.id = $1 AND k.revoked_at IS NULL AND e.deleted_at IS NULL
          FOR SHARE OF k),
       seen AS (
         INSERT INTO work_pollers (environment_id, worker_id, last_seen_at)
         SELECT $2, $3, now FROM k WHERE $3::text IS NOT NULL
         ON CONFLICT (environment_id, worker_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at)
       SELECT k.now, (SELECT array_agg(o.id) FROM (${overdueSql('$2', 'k.now')}) o) AS overdue FROM k`,
      [keyId, environmentId, workerId],
    );
    if (rows.length === 0) throw unauthenticated('the Environment key was revoked');
    return { now: new Date(rows[0]!.now), overdue: rows[0]!.overdue ?? [] };
  }

  /** Queue depth and age per Environment across the cluster (the metrics gauges, read at scrape time). */
  async queueSamples(
    em: EntityManager,
  ): Promise<Array<{ environment_id: string; depth: number; age: number }>> {
    return em.query(
      `SELECT environment_id,
              count(*) FILTER (WHERE claimed_at IS NULL)::int AS depth,
              EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 AS age
         FROM work_items WHERE state = 'queued' AND (expires_at IS NULL OR expires_at > now())
        GROUP BY environment_id`,
    );
  }

  /** The Environment's queue counts and the pollers seen in the last 30 s (Stats). */
  async queueStats(
    em: EntityManager,
    environmentId: string,
    now: Date,
  ): Promise<{ depth: number; pending: number; oldest: Date | null; workersPolling: number }> {
    const [counts] = await em.query(
      `SELECT count(*) FILTER (WHERE state = 'queued' AND claimed_at IS NULL)::int AS depth,
              count(*) FILTER (WHERE state = 'queued' AND claimed_at IS NOT NULL)::int AS pending,
              min(created_at) FILTER (WHERE state = 'queued') AS oldest
         FROM work_items WHERE environment_id = $1`,
      [environmentId],
    );
    const [pollers] = await em.query(
      `SELECT count(*)::int AS n FROM work_pollers WHERE environment_id = $1 AND last_seen_at > $2`,
      [environmentId, new Date(now.getTime() - 30_000)],
    );
    return {
      depth: counts.depth as number,
      pending: counts.pending as number,
      oldest: counts.oldest ? new Date(counts.oldest) : null,
      workersPolling: pollers.n as number,
    };
  }
}
