import { newId } from '@mango/platform-ids';
import { SessionEntity, SessionEventEntity } from './entities';
import type { EntityManager } from 'typeorm';
import { recordWebhookEvents, sessionWebhookEvents } from './webhook-outbox';

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
  // Idempotent appends (activity retries): keys already in the log are skipped, in one lookup.
  const keys = events.map((e) => e.idempotencyKey).filter((k): k is string => Boolean(k));
  const seen = new Set<string>();
  if (keys.length) {
    const found: Array<{ k: string }> = await tx.query(
      'SELECT idempotency_key AS k FROM session_events WHERE session_id = $1 AND idempotency_key = ANY($2::text[])',
      [session.id, keys],
    );
    for (const f of found) seen.add(f.k);
  }
  let seq = BigInt(session.lastSeq);
  const rows: SessionEventEntity[] = [];
  const kinds: string[] = [];
  for (const e of events) {
    if (e.idempotencyKey && seen.has(e.idempotencyKey)) continue;
    if (e.idempotencyKey) seen.add(e.idempotencyKey);
    seq += 1n;
    rows.push(
      tx.create(SessionEventEntity, {
        id: e.id ?? newId('sessionEvent', now.getTime()),
        sessionId: session.id,
        seq: seq.toString(),
        type: e.type,
        body: e.body,
        idempotencyKey: e.idempotencyKey ?? null,
        toolUseId: e.toolUseId ?? null,
        processedAt: e.processed ? now : null,
        createdAt: now,
      }),
    );
    kinds.push(e.outboxKind ?? e.type);
  }
  if (rows.length) {
    // Every event and its outbox row in one statement.
    await tx.query(
      `WITH e AS (
         INSERT INTO session_events (id, session_id, seq, type, body, idempotency_key, tool_use_id, processed_at, created_at)
         SELECT id, $1, seq, type, body, key, tool_use_id, processed_at, $2
           FROM unnest($3::text[], $4::bigint[], $5::text[], $6::jsonb[], $7::text[], $8::text[], $9::timestamptz[])
                AS t(id, seq, type, body, key, tool_use_id, processed_at)
         RETURNING seq)
       INSERT INTO outbox (session_id, event_seq, kind, created_at)
       SELECT $1, seq, kind, $2 FROM unnest($4::bigint[], $10::text[]) AS o(seq, kind)`,
      [
        session.id,
        now,
        rows.map((r) => r.id),
        rows.map((r) => r.seq),
        rows.map((r) => r.type),
        rows.map((r) => JSON.stringify(r.body)),
        rows.map((r) => r.idempotencyKey),
        rows.map((r) => r.toolUseId),
        rows.map((r) => r.processedAt),
        kinds,
      ],
    );
    // Lifecycle events announce themselves to subscribed webhooks in the same transaction.
    await recordWebhookEvents(tx, session.workspaceId, sessionWebhookEvents(session.id, rows), now);
  }
  const runnable = events.some((e) => e.runnable);
  session.lastSeq = seq.toString();
  session.updatedAt = now;
  if (runnable && session.status === 'idle') session.status = 'running';
  // The projection and the "look now" notice in one statement.
  await tx.query(
    `WITH u AS (UPDATE sessions SET last_seq = $2, updated_at = $3, status = $4 WHERE id = $1 RETURNING id)
     SELECT pg_notify($5, $6) FROM u`,
    [
      session.id,
      session.lastSeq,
      now,
      session.status,
      SESSION_EVENTS_CHANNEL,
      `${session.id}:${session.lastSeq}`,
    ],
  );
  if (runnable) {
    // Coalesced while a live item exists (the partial unique index on session_id); input after Stop starts a new one.
    await tx.query(
      `WITH w AS (
         INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
         VALUES ($1, $2, $3, 'session', $4, 'queued', '{}', $5)
         ON CONFLICT (session_id) WHERE session_id IS NOT NULL AND state <> 'stopped' DO NOTHING RETURNING id)
       SELECT pg_notify('mango_work', $3) FROM w`,
      [newId('work', now.getTime()), session.workspaceId, session.environmentId, session.id, now],
    );
  }
  return rows;
}
