import {
  type ArchiveDecision,
  archiveDecision,
  INITIAL_THREAD_STATUS,
  type ThreadStatuses,
  type ThreadStatus,
  projectThreadStatus,
  THREAD_ARCHIVE_REQUESTED,
  type ThreadScopedEvent,
  threadStatusEvent,
} from '@mango/domain-sessions';
import { ID_PREFIXES, newId } from '@mango/platform-ids';
import type { DataSource, EntityManager } from 'typeorm';
import { SessionEntity, SessionThreadEntity } from './entities';
import { insertRow } from './insert-row';
import { OUTBOX_CHANNEL } from './outbox';

/** The primary Thread's id: the Session's ULID with the `sthr_` prefix (what the Thread routes always served). */
export function primaryThreadId(sessionId: string): string {
  return ID_PREFIXES.sessionThread + sessionId.slice(ID_PREFIXES.session.length);
}

/** What {@link SessionThreadRepository.requestArchive} answers. */
export type ArchiveResult =
  { decision: ArchiveDecision; thread: SessionThreadEntity } | { decision: 'not_found'; thread?: undefined };

/** Events that may move some Thread's status: status events and runnable input (the rest move nothing). */
function movesAThread(e: ThreadScopedEvent): boolean {
  return (
    Boolean(e.runnable) || e.type.startsWith('session.status_') || e.type.startsWith('session.thread_status_')
  );
}

/**
 * The Thread repository (ADR 0005 "Aggregates own their SQL", ADR 0017): `session_threads` rows — the
 * primary created with its Session, delegates created by the orchestration —, their reads, their status
 * written only through the Thread status machine (libs/domain/sessions `session-thread.state.ts`), and
 * the archive's durable intent. A plain class: Nest apps get it from `PersistenceModule`, activities
 * construct it with their DataSource.
 */
export class SessionThreadRepository {
  constructor(private readonly dataSource?: DataSource) {}

  /** The primary Thread of a Session being created, in the creating transaction (before its first append). */
  async createPrimary(
    tx: EntityManager,
    session: Pick<SessionEntity, 'id' | 'usage' | 'createdAt'>,
  ): Promise<SessionThreadEntity> {
    const row = tx.create(SessionThreadEntity, {
      id: primaryThreadId(session.id),
      sessionId: session.id,
      parentThreadId: null,
      agentRef: null,
      status: INITIAL_THREAD_STATUS,
      usage: session.usage,
      stats: null,
      archiveRequestedAt: null,
      archivedAt: null,
      createdAt: session.createdAt,
      updatedAt: session.createdAt,
    });
    await insertRow(tx, SessionThreadEntity, row);
    return row;
  }

  /**
   * A delegate (or Advisor) Thread under `parentThreadId`, in the caller's transaction: idle until its
   * first input. `agentRef` is the roster entry's index in the frozen snapshot, or `advisor`.
   */
  async createChild(
    tx: EntityManager,
    sessionId: string,
    parentThreadId: string,
    agentRef: string,
    now: Date,
  ): Promise<SessionThreadEntity> {
    const row = tx.create(SessionThreadEntity, {
      id: newId('sessionThread', now.getTime()),
      sessionId,
      parentThreadId,
      agentRef,
      status: INITIAL_THREAD_STATUS,
      usage: null,
      stats: null,
      archiveRequestedAt: null,
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    await insertRow(tx, SessionThreadEntity, row);
    return row;
  }

  /** A Session's Threads, the primary first, then in creation (id) order; at most `limit` after `afterId`. */
  list(
    em: EntityManager,
    sessionId: string,
    page: { limit: number; afterId?: string } = { limit: 1000 },
  ): Promise<SessionThreadEntity[]> {
    const q = em
      .createQueryBuilder(SessionThreadEntity, 't')
      .where('t.session_id = :sessionId', { sessionId })
      .orderBy('(t.parent_thread_id IS NULL)', 'DESC')
      .addOrderBy('t.id', 'ASC')
      .limit(page.limit);
    if (page.afterId) q.andWhere('t.parent_thread_id IS NOT NULL AND t.id > :after', { after: page.afterId });
    return q.getMany();
  }

  /** One Thread of a Session, or null. */
  get(em: EntityManager, sessionId: string, threadId: string): Promise<SessionThreadEntity | null> {
    return em.findOne(SessionThreadEntity, { where: { id: threadId, sessionId } });
  }

  /**
   * Writes what the Thread status machine answers for appended events, in the appending transaction
   * (the caller holds the Session's row lock): every Thread an event concerns, in order; a row whose
   * status does not change is not written. Answers the Threads whose status changed and, when the
   * Session has delegate Threads, the Session's status their statuses make (`sessionStatusOfThreads`:
   * running while any Thread runs); `sessionStatus` is undefined when no event moved a Thread or the
   * Session has only its primary.
   */
  async projectStatus(
    tx: EntityManager,
    sessionId: string,
    events: readonly ThreadScopedEvent[],
    now: Date,
  ): Promise<{ changed: Array<Pick<SessionThreadEntity, 'id' | 'status'>>; statuses?: ThreadStatuses }> {
    if (!events.some(movesAThread)) return { changed: [] };
    const rows: Array<{ id: string; status: string; primary: boolean }> = await tx.query(
      `SELECT id, status, parent_thread_id IS NULL AS primary FROM session_threads WHERE session_id = $1`,
      [sessionId],
    );
    const changed: Array<Pick<SessionThreadEntity, 'id' | 'status'>> = [];
    const after = new Map<string, ThreadStatus>();
    for (const row of rows) {
      const seen = events
        .map((e) => threadStatusEvent({ id: row.id, primary: row.primary }, e))
        .filter((e) => e !== undefined);
      const next = projectThreadStatus(row.status, seen);
      after.set(row.id, next);
      if (next !== row.status) changed.push({ id: row.id, status: next });
    }
    if (changed.length)
      await tx.query(
        `UPDATE session_threads t SET status = c.status, updated_at = $2
           FROM unnest($1::text[], $3::text[]) AS c(id, status) WHERE t.id = c.id`,
        [changed.map((c) => c.id), now, changed.map((c) => c.status)],
      );
    const primary = rows.find((r) => r.primary);
    if (!primary) return { changed };
    const delegates = rows.filter((r) => !r.primary).map((r) => after.get(r.id)!);
    return { changed, statuses: { primary: after.get(primary.id)!, delegates } };
  }

  /**
   * The live delegate Thread of a roster entry (a follow-up continues it): not archived, not asked to
   * be, not terminated; or null.
   */
  findDelegate(tx: EntityManager, sessionId: string, agentRef: string): Promise<SessionThreadEntity | null> {
    return tx
      .createQueryBuilder(SessionThreadEntity, 't')
      .where('t.session_id = :sessionId AND t.agent_ref = :agentRef AND t.parent_thread_id IS NOT NULL', {
        sessionId,
        agentRef,
      })
      .andWhere("t.archive_requested_at IS NULL AND t.archived_at IS NULL AND t.status <> 'terminated'")
      .orderBy('t.id', 'DESC')
      .getOne();
  }

  /** Delegate Threads (not the Advisor's) running or rescheduling now: the 25-at-once limit counts them. */
  async countRunningDelegates(tx: EntityManager, sessionId: string): Promise<number> {
    const [row]: Array<{ n: number }> = await tx.query(
      `SELECT count(*)::int AS n FROM session_threads
        WHERE session_id = $1 AND parent_thread_id IS NOT NULL AND agent_ref <> 'advisor'
          AND status IN ('running', 'rescheduling')`,
      [sessionId],
    );
    return row?.n ?? 0;
  }

  /**
   * A Session's child Threads that a Session-wide signal still concerns: not archived and (unless
   * `terminated` is asked for, as a Fail's fan-out does after it ended them) not terminated.
   */
  async liveChildren(
    em: EntityManager,
    sessionId: string,
    o: { terminated?: boolean } = {},
  ): Promise<Array<{ id: string; agentRef: string | null }>> {
    const rows: Array<{ id: string; agent_ref: string | null }> = await em.query(
      `SELECT id, agent_ref FROM session_threads
        WHERE session_id = $1 AND parent_thread_id IS NOT NULL AND archived_at IS NULL
          AND ($2 OR status <> 'terminated')
        ORDER BY id`,
      [sessionId, o.terminated === true],
    );
    return rows.map((r) => ({ id: r.id, agentRef: r.agent_ref }));
  }

  /** A Session's delegate Threads whose status says a turn is under way (the sweeper's candidates). */
  async runningChildren(sessionId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.ds().query(
      `SELECT id FROM session_threads
        WHERE session_id = $1 AND parent_thread_id IS NOT NULL AND archived_at IS NULL
          AND status IN ('running', 'rescheduling')
        ORDER BY id`,
      [sessionId],
    );
    return rows.map((r) => r.id);
  }

  /** Adds a model request's usage to one Thread's own (the Session's is kept by the Session log). */
  async saveUsage(tx: EntityManager, threadId: string, usage: Record<string, unknown>): Promise<void> {
    await tx.query('UPDATE session_threads SET usage = $2::jsonb WHERE id = $1', [
      threadId,
      JSON.stringify(usage),
    ]);
  }

  /**
   * `POST …/threads/{id}/archive` (ADR 0017 "Archive"): under the Session's row lock (appends, and so
   * status writes, wait), the archive rule decides; `request` records the durable intent —
   * `archive_requested_at` and a {@link THREAD_ARCHIVE_REQUESTED} outbox row for the Thread, with the
   * relay's wake-up — in one transaction. Nothing is written for any other decision.
   */
  async requestArchive(sessionId: string, threadId: string, now: Date): Promise<ArchiveResult> {
    return this.ds().transaction(async (tx) => {
      const [session]: Array<{ last_seq: string }> = await tx.query(
        'SELECT last_seq FROM sessions WHERE id = $1 AND deleted_at IS NULL FOR UPDATE',
        [sessionId],
      );
      if (!session) return { decision: 'not_found' };
      const thread = await tx.findOne(SessionThreadEntity, {
        where: { id: threadId, sessionId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!thread) return { decision: 'not_found' };
      const decision = archiveDecision(thread);
      if (decision !== 'request') return { decision, thread };
      thread.archiveRequestedAt = now;
      thread.updatedAt = now;
      await tx.query(
        `WITH t AS (UPDATE session_threads SET archive_requested_at = $3, updated_at = $3 WHERE id = $2 RETURNING id),
              o AS (INSERT INTO outbox (session_id, event_seq, kind, session_thread_id, created_at)
                    SELECT $1, $4, $5, id, $3 FROM t RETURNING id)
         SELECT pg_notify($6, $1) FROM o`,
        [sessionId, threadId, now, session.last_seq, THREAD_ARCHIVE_REQUESTED, OUTBOX_CHANNEL],
      );
      return { decision, thread };
    });
  }

  /**
   * Finishes a requested archive (the child workflow's last step, or the sweeper's when the workflow is
   * gone): sets `archived_at` once. Answers whether this call finished it.
   */
  async finishArchive(tx: EntityManager, threadId: string, now: Date): Promise<boolean> {
    const rows: Array<{ id: string }> = await tx.query(
      `WITH u AS (UPDATE session_threads SET archived_at = $2, updated_at = $2
                   WHERE id = $1 AND archive_requested_at IS NOT NULL AND archived_at IS NULL RETURNING id)
       SELECT id FROM u`,
      [threadId, now],
    );
    return rows.length > 0;
  }

  /** Requested archives not yet finished, the oldest request first (the sweeper's candidates). */
  async pendingArchives(limit: number): Promise<Array<{ sessionId: string; threadId: string }>> {
    const rows: Array<{ session_id: string; id: string }> = await this.ds().query(
      `SELECT session_id, id FROM session_threads
        WHERE archive_requested_at IS NOT NULL AND archived_at IS NULL
        ORDER BY archive_requested_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ sessionId: r.session_id, threadId: r.id }));
  }

  private ds(): DataSource {
    if (!this.dataSource) throw new Error('this SessionThreadRepository was built without a DataSource');
    return this.dataSource;
  }
}
