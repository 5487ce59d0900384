import { newId } from '@mango/platform-ids';
import { insertRow } from './insert-row';
import { OutboxEntity, SessionEntity, SessionEventEntity } from './entities';
import type { EntityManager } from 'typeorm';

export const SESSION_EVENTS_CHANNEL = 'mango_session_events';

/**
 * A preview of an `agent.message` being generated (never persisted): published on the same channel as
 * event notices, so a listener sees previews and the buffered event's notice in commit order.
 */
export interface MessageDelta {
  sessionId: string;
  /** The id the buffered agent.message will have. */
  eventId: string;
  /** Index of the text block within the message. */
  index: number;
  text: string;
}

/** NOTIFY payloads stay well under PostgreSQL's 8,000-byte limit. */
const MAX_DELTA_CHARS = 2000;

/** Publishes a preview (split into several notices when long). Best effort: a lost one is not retried. */
export async function publishDelta(em: Pick<EntityManager, 'query'>, delta: MessageDelta): Promise<void> {
  for (let at = 0; at < delta.text.length; at += MAX_DELTA_CHARS) {
    const payload = JSON.stringify({
      s: delta.sessionId,
      e: delta.eventId,
      i: delta.index,
      t: delta.text.slice(at, at + MAX_DELTA_CHARS),
    });
    await em.query('SELECT pg_notify($1, $2)', [SESSION_EVENTS_CHANNEL, payload]);
  }
}

/** A notice on the channel: an appended event (`<session id>:<seq>`) or a preview. */
export function parseSessionNotice(
  payload: string,
): { kind: 'event'; sessionId: string } | ({ kind: 'delta' } & MessageDelta) | undefined {
  if (payload.startsWith('{')) {
    try {
      const d = JSON.parse(payload) as { s: string; e: string; i: number; t: string };
      return { kind: 'delta', sessionId: d.s, eventId: d.e, index: d.i, text: d.t };
    } catch {
      return undefined;
    }
  }
  const colon = payload.indexOf(':');
  return colon > 0 ? { kind: 'event', sessionId: payload.slice(0, colon) } : undefined;
}

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
    /** A pre-allocated id (an agent.message whose previews were already published under it). */
    id?: string;
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
      id: e.id ?? newId('sessionEvent', now.getTime()),
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
