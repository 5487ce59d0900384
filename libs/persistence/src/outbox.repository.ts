import type { DataSource, EntityManager } from 'typeorm';
import { OUTBOX_PRUNE_BATCH, pruneDispatchedOutbox } from './outbox';

/** An outbox row as the relay claims it: what a signal needs, without a read of the log (ADR 0007). */
export interface OutboxRow {
  id: string;
  session_id: string;
  event_seq: string;
  kind: string;
  session_thread_id: string | null;
  /** The call a tool result answers. */
  tool_use_id: string | null;
  /** Seconds the row waited for its dispatch. */
  waited: number;
  /** The trace of the request that wrote the event. */
  traceparent: string | null;
}

/**
 * The Session outbox's relay side (ADR 0007): the backlog gauges, a claimed batch dispatched in one
 * transaction, and the pruning of dispatched rows. The Session log writes the rows (`SessionLog.append`).
 */
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Undispatched rows and the age of the oldest, in seconds (null when drained): cluster-wide. */
  async backlog(): Promise<{ n: number; age: number | null }> {
    const [row]: Array<{ n: number; age: number | null }> = await this.dataSource.query(
      `SELECT count(*)::int AS n, EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 AS age
         FROM outbox WHERE dispatched_at IS NULL`,
    );
    return row!;
  }

  /**
   * Claims up to `batch` undispatched rows in id order (FOR UPDATE SKIP LOCKED: several relays may run),
   * lets `relay` hand them off in the claiming transaction, and marks them dispatched there: a crash
   * before the commit leaves them for the next pass (at least once). Answers the rows dispatched.
   */
  dispatchBatch(
    batch: number,
    relay: (tx: EntityManager, rows: OutboxRow[]) => Promise<void>,
  ): Promise<OutboxRow[]> {
    return this.dataSource.transaction(async (tx) => {
      const rows: OutboxRow[] = await tx.query(
        `SELECT o.id, o.session_id, o.event_seq, o.kind, o.session_thread_id, e.tool_use_id, e.body->>'_traceparent' AS traceparent,
                EXTRACT(EPOCH FROM (now() - o.created_at))::float8 AS waited
           FROM outbox o LEFT JOIN session_events e ON e.session_id = o.session_id AND e.seq = o.event_seq
          WHERE o.dispatched_at IS NULL ORDER BY o.id LIMIT $1 FOR UPDATE OF o SKIP LOCKED`,
        [batch],
      );
      await relay(tx, rows);
      if (rows.length)
        await tx.query('UPDATE outbox SET dispatched_at = now() WHERE id = ANY($1::bigint[])', [
          rows.map((r) => r.id),
        ]);
      return rows;
    });
  }

  /** Deletes up to `batches` batches of dispatched rows past their retention (fewer once none is left). */
  async prune(batches: number): Promise<void> {
    for (let i = 0; i < batches; i++) {
      const deleted = await pruneDispatchedOutbox(this.dataSource);
      if (deleted < OUTBOX_PRUNE_BATCH) return;
    }
  }
}

/**
 * The webhook outbox's relay side: pending `webhook_deliveries` rows (written in the transaction of the
 * change they announce, `recordWebhookEvents`) claimed and marked dispatched in one transaction.
 */
export class WebhookDeliveryRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims up to `batch` pending deliveries in id order (FOR UPDATE SKIP LOCKED), lets `start` start
   * each one's delivery, and marks them dispatched in the same transaction (a crash before the commit
   * leaves them pending: at least once). Answers how many it dispatched.
   */
  dispatchBatch(batch: number, start: (deliveryId: string) => Promise<void>): Promise<number> {
    return this.dataSource.transaction(async (tx) => {
      const rows: Array<{ id: string }> = await tx.query(
        `SELECT id FROM webhook_deliveries WHERE dispatched_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batch],
      );
      for (const row of rows) await start(row.id);
      if (rows.length)
        await tx.query('UPDATE webhook_deliveries SET dispatched_at = now() WHERE id = ANY($1::text[])', [
          rows.map((r) => r.id),
        ]);
      return rows.length;
    });
  }
}
