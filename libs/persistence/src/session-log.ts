import { newId } from '@mango/platform-ids';
import { insertRow } from './insert-row';
import { OutboxEntity, SessionEntity, SessionEventEntity } from './entities';
import type { EntityManager } from 'typeorm';

export const SESSION_EVENTS_CHANNEL = 'mango_session_events';

/**
 * Appends events to a Session whose row the caller holds FOR UPDATE: each takes the next gapless
 * sequence. In the same transaction, runnable input creates (or coalesces into) the Session's live Work
 * item and writes one outbox row per event for the orchestrator; NOTIFY says "look now" on commit.
 */
export async function appendEvents(
  tx: EntityManager,
  session: SessionEntity,
  events: Array<{
    type: string;
    body: Record<string, unknown>;
    processed: boolean;
    runnable: boolean;
    idempotencyKey?: string;
    /** user.tool_result: the agent.tool_use it answers (unique per Session). */
    toolUseId?: string;
    /** The outbox row's kind when it differs from the event type (e.g. a budget change inside session.updated). */
    outboxKind?: string;
  }>,
  now: Date,
): Promise<SessionEventEntity[]> {
  let seq = BigInt(session.lastSeq);
  const rows: SessionEventEntity[] = [];
  for (const e of events) {
    if (e.idempotencyKey) {
      const seen = await tx.query(
        'SELECT 1 FROM session_events WHERE session_id = $1 AND idempotency_key = $2',
        [session.id, e.idempotencyKey],
      );
      if (seen.length) continue; // a retried activity: appended once already
    }
    seq += 1n;
    const row = tx.create(SessionEventEntity, {
      id: newId('sessionEvent', now.getTime()),
      sessionId: session.id,
      seq: seq.toString(),
      type: e.type,
      body: e.body,
      idempotencyKey: e.idempotencyKey ?? null,
      toolUseId: e.toolUseId ?? null,
      processedAt: e.processed ? now : null,
      createdAt: now,
    });
    await insertRow(tx, SessionEventEntity, row);
    await insertRow(
      tx,
      OutboxEntity,
      tx.create(OutboxEntity, {
        sessionId: session.id,
        eventSeq: row.seq,
        kind: e.outboxKind ?? e.type,
        createdAt: now,
        dispatchedAt: null,
      }),
    );
    rows.push(row);
  }
  const runnable = events.some((e) => e.runnable);
  session.lastSeq = seq.toString();
  session.updatedAt = now;
  if (runnable && session.status === 'idle') session.status = 'running';
  await tx.update(
    SessionEntity,
    { id: session.id },
    { lastSeq: session.lastSeq, updatedAt: now, status: session.status },
  );
  if (runnable) {
    // Coalesced while a live item exists (the partial unique index on session_id); input after Stop starts a new one.
    const created: Array<{ id: string }> = await tx.query(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       VALUES ($1, $2, $3, 'session', $4, 'queued', '{}', $5)
       ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING RETURNING id`,
      [newId('work', now.getTime()), session.workspaceId, session.environmentId, session.id, now],
    );
    if (created.length) await tx.query(`SELECT pg_notify('mango_work', $1)`, [session.environmentId]);
  }
  await tx.query('SELECT pg_notify($1, $2)', [SESSION_EVENTS_CHANNEL, `${session.id}:${session.lastSeq}`]);
  return rows;
}
