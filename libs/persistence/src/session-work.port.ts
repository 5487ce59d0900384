import type { EntityManager } from 'typeorm';
import { ensureSessionWork, stopSessionWork } from './work-item.repository';

/**
 * What the Session log needs from the Work aggregate (ADR 0005): the Session aggregate never writes
 * `work_items` itself. The Work repository (`work-item.repository.ts`) implements it
 * ({@link workItemSessionWork}); stopping goes through the work-lease state machine's forced Stop.
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

/** The Nest token of the Session log's {@link SessionWorkPort} (PersistenceModule binds {@link workItemSessionWork}). */
export const SESSION_WORK = Symbol.for('mango.SessionWorkPort');

/** {@link SessionWorkPort} implemented by the Work aggregate's repository (`work-item.repository.ts`). */
export const workItemSessionWork: SessionWorkPort = {
  async ensureSessionWork(tx, session, now) {
    await ensureSessionWork(tx, session, now);
  },
  async stopSessionWork(tx, sessionId, now) {
    await stopSessionWork(tx, sessionId, now);
  },
};
