import { newId } from '@mango/platform-ids';
import type { EntityManager } from 'typeorm';

/**
 * What the Session log needs from the Work aggregate (ADR 0005): the Session aggregate never writes
 * `work_items` itself. The Work repository (work-core's `work-item.repository.ts`) implements this port;
 * until it is bound, {@link sqlSessionWork} is the implementation (the SQL the Session log used to run
 * inline, unchanged).
 */
export interface SessionWorkPort {
  /**
   * Runnable input: create the Session's live Work item, or coalesce into the one that exists (the
   * partial unique index on `session_id`), and wake pollers of its Environment. Same transaction.
   */
  ensureSessionWork(
    tx: EntityManager,
    session: { id: string; workspaceId: string; environmentId: string },
    now: Date,
  ): Promise<void>;
  /** A deleted Session: its live Work is stopped at once. Same transaction. */
  stopSessionWork(tx: EntityManager, sessionId: string, now: Date): Promise<void>;
}

/** The Nest token of the Session log's {@link SessionWorkPort} (PersistenceModule binds {@link sqlSessionWork}). */
export const SESSION_WORK = Symbol.for('mango.SessionWorkPort');

/** The Work channel pollers listen on (features/work `WORK_CHANNEL`). */
const WORK_CHANNEL = 'mango_work';

/** The current SQL behind {@link SessionWorkPort}, to be replaced by the Work repository at merge. */
export const sqlSessionWork: SessionWorkPort = {
  async ensureSessionWork(tx, session, now) {
    // Coalesced while a live item exists (the partial unique index on session_id); input after Stop starts a new one.
    await tx.query(
      `WITH w AS (
         INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
         VALUES ($1, $2, $3, 'session', $4, 'queued', '{}', $5)
         ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING RETURNING id)
       SELECT pg_notify('${WORK_CHANNEL}', $3) FROM w`,
      [newId('work', now.getTime()), session.workspaceId, session.environmentId, session.id, now],
    );
  },
  async stopSessionWork(tx, sessionId, now) {
    await tx.query(
      `UPDATE work_items SET state = 'stopped', stopped_at = $2, stop_requested_at = COALESCE(stop_requested_at, $2) WHERE session_id = $1 AND state <> 'stopped'`,
      [sessionId, now],
    );
  },
};
