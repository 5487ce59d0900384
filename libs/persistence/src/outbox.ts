import type { EntityManager } from 'typeorm';

/**
 * The Session outbox (ADR 0007): rows only for events that wake the Session workflow, written by the
 * Session log in the event's transaction; the orchestrator's relay claims, signals and marks them, and
 * prunes them once dispatched.
 */

/** NOTIFY channel of an append that wrote outbox rows (payload: the session id). The relay listens here. */
export const OUTBOX_CHANNEL = 'mango_outbox';

/** How long dispatched rows are kept (for inspecting recent hand-offs) before pruning. */
export const OUTBOX_RETENTION_MS = 10 * 60_000;
/** Rows deleted per pruning statement. */
export const OUTBOX_PRUNE_BATCH = 1000;

/**
 * Deletes up to `batch` rows dispatched before `now - retentionMs` (oldest first) and answers how many
 * it deleted. Undispatched rows are never touched. Rows locked by a relay pass are skipped.
 */
export async function pruneDispatchedOutbox(
  em: Pick<EntityManager, 'query'>,
  options: { retentionMs?: number; batch?: number } = {},
): Promise<number> {
  const retention = options.retentionMs ?? OUTBOX_RETENTION_MS;
  const batch = options.batch ?? OUTBOX_PRUNE_BATCH;
  const [row]: Array<{ n: number }> = await em.query(
    `WITH d AS (
       DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox
          WHERE dispatched_at IS NOT NULL AND dispatched_at < now() - make_interval(secs => $1::float8 / 1000)
          ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id)
     SELECT count(*)::int AS n FROM d`,
    [retention, batch],
  );
  return row?.n ?? 0;
}
