import {
  pausedAtBudget,
  projectSessionStatus,
  resumeStateFromLog,
  sessionStatusAfter,
  traceparentOf,
  TURN_ORIGIN_TYPE,
  type ResumeLogEvent,
  RESUME_LOG_TYPES,
  SESSION_WIDE_RESUME_TYPES,
  threadAgentName,
  threadKeyPrefix,
  asOwnType,
  unprefixedKey,
  wakesWorkflow,
} from '@mango/domain-sessions';
import { newId } from '@mango/platform-ids';
import type { DataSource, EntityManager } from 'typeorm';
import { SessionEntity, SessionEventEntity } from './entities';
import type { SessionLogCache } from './session-log-cache';
import { OUTBOX_CHANNEL } from './outbox';
import { runStatement } from './prepared-statement';
import { primaryThreadId, SessionThreadRepository } from './session-thread.repository';
import { SessionWorkPort, workItemSessionWork } from './session-work.port';
import { recordWebhookEvents, sessionWebhookEvents } from './webhook-outbox';

/** NOTIFY channel of an append (payload `<session id>:<seq>`): the log grew, re-read it. */
export const SESSION_EVENTS_CHANNEL = 'mango_session_events';
/** NOTIFY channel of message previews (JSON payload, never persisted): only SSE streams listen (ADR 0007). */
export const SESSION_PREVIEWS_CHANNEL = 'mango_session_previews';

/**
 * An append in one statement (one round trip, prepared once per connection): the events, their outbox
 * rows, the projection, the "look now" notice and (when there are outbox rows) the relay's wake-up. Its
 * values come from {@link appendValues}.
 * Exported for the sessions bench's floor (tools/bench/sessions), which runs this same text over bare pg.
 */
export const APPEND_SQL = `WITH e AS (
    INSERT INTO session_events (id, session_id, seq, type, body, idempotency_key, tool_use_id, processed_at, created_at, session_thread_id)
    SELECT id, $1, seq, type, body, key, tool_use_id, processed_at, $2, thread_id
      FROM unnest($3::text[], $4::bigint[], $5::text[], $6::jsonb[], $7::text[], $8::text[], $9::timestamptz[], $13::text[])
           AS t(id, seq, type, body, key, tool_use_id, processed_at, thread_id)
    RETURNING seq),
  o AS (
    INSERT INTO outbox (session_id, event_seq, kind, session_thread_id, created_at)
    SELECT $1, seq, kind, thread_id, $2 FROM unnest($10::bigint[], $11::text[], $14::text[]) AS o(seq, kind, thread_id)
    RETURNING id),
  u AS (UPDATE sessions SET last_seq = $15, updated_at = $16, status = $17 WHERE id = $1 RETURNING id)
  SELECT pg_notify($18, $19) FROM u
  UNION ALL
  SELECT pg_notify($12, $1) FROM (SELECT 1 FROM o LIMIT 1) AS any_row`;

/** The start-from-log columns of one event, as selected. */
interface ResumeRow {
  seq: string;
  type: string;
  idempotency_key: string | null;
  stop_reason: string | null;
  budget_changed: boolean;
}

/** What the resume fold reads of a {@link ResumeRow}. */
function resumeEventOf(r: ResumeRow): ResumeLogEvent {
  return {
    seq: r.seq,
    type: r.type,
    idempotencyKey: r.idempotency_key,
    stopReason: r.stop_reason,
    budgetChanged: r.budget_changed,
  };
}

/** One event row of {@link appendValues}. */
export interface AppendRow {
  id: string;
  seq: string;
  type: string;
  body: Record<string, unknown>;
  idempotencyKey: string | null;
  toolUseId: string | null;
  processedAt: Date | null;
  sessionThreadId: string | null;
}

/** The values of {@link APPEND_SQL}, in its parameters' order: the one place that knows them. */
export function appendValues(a: {
  sessionId: string;
  now: Date;
  rows: readonly AppendRow[];
  /** The rows that wake the workflow: their sequence, outbox kind and Thread. */
  outbox: ReadonlyArray<{ seq: string; kind: string; sessionThreadId: string | null }>;
  lastSeq: string;
  status: string;
}): unknown[] {
  return [
    a.sessionId,
    a.now,
    a.rows.map((r) => r.id),
    a.rows.map((r) => r.seq),
    a.rows.map((r) => r.type),
    a.rows.map((r) => JSON.stringify(r.body)),
    a.rows.map((r) => r.idempotencyKey),
    a.rows.map((r) => r.toolUseId),
    a.rows.map((r) => r.processedAt),
    a.outbox.map((o) => o.seq),
    a.outbox.map((o) => o.kind),
    OUTBOX_CHANNEL,
    a.rows.map((r) => r.sessionThreadId),
    a.outbox.map((o) => o.sessionThreadId),
    a.lastSeq,
    a.now,
    a.status,
    SESSION_EVENTS_CHANNEL,
    `${a.sessionId}:${a.lastSeq}`,
  ];
}

/** An append whose events were all in the log already: the projection and the notice as always. */
const PROJECT_SQL = `WITH u AS (UPDATE sessions SET last_seq = $2, updated_at = $3, status = $4 WHERE id = $1 RETURNING id)
  SELECT pg_notify($5, $6) FROM u`;

/** Reads one Session's log incrementally (see {@link SessionLog.reader}). */
export interface SessionLogReader {
  /** The whole log so far, in sequence order (the first call reads it all, later calls only what is new). */
  read(tx: EntityManager): Promise<SessionEventEntity[]>;
}

/** One event to append (the log gives it its sequence, id and time). */
export interface NewSessionEvent {
  type: string;
  body: Record<string, unknown>;
  processed: boolean;
  /** Input that lets the agent continue: wakes an idle Session and needs the Session's Work item. */
  runnable: boolean;
  idempotencyKey?: string;
  /** user.tool_result: the agent.tool_use it answers (unique per Session). */
  toolUseId?: string;
  /** The Thread the event belongs to (`session_events.session_thread_id`); absent for the primary (ADR 0017). */
  sessionThreadId?: string;
  /** A pre-allocated id (an agent.message whose previews were already published under it). */
  id?: string;
  /** The outbox row's kind when it differs from the event type (e.g. a budget change inside session.updated). */
  outboxKind?: string;
}

/**
 * A preview of an `agent.message` being generated (never persisted): published on its own channel; a
 * listener that LISTENs to it and to the events channel on one connection sees previews and the buffered
 * event's notice in commit order.
 */
export interface MessageDelta {
  sessionId: string;
  /** The id the buffered agent.message will have. */
  eventId: string;
  /** Index of the text block within the message. */
  index: number;
  text: string;
  /** The previewed event's type: `agent.message` (text deltas, the default) or `agent.thinking` (a start only). */
  eventType?: 'agent.thinking';
}

/** NOTIFY payloads stay well under PostgreSQL's 8,000-byte limit. */
const MAX_DELTA_CHARS = 2000;

/** Publishes a preview (split into several notices when long). Best effort: a lost one is not retried. */
export async function publishDelta(em: Pick<EntityManager, 'query'>, delta: MessageDelta): Promise<void> {
  if (delta.eventType === 'agent.thinking') {
    // A thinking preview announces the agent.thinking event only (it has no content to preview).
    const payload = JSON.stringify({ s: delta.sessionId, e: delta.eventId, i: 0, t: '', k: delta.eventType });
    await em.query('SELECT pg_notify($1, $2)', [SESSION_PREVIEWS_CHANNEL, payload]);
    return;
  }
  for (let at = 0; at < delta.text.length; at += MAX_DELTA_CHARS) {
    const payload = JSON.stringify({
      s: delta.sessionId,
      e: delta.eventId,
      i: delta.index,
      t: delta.text.slice(at, at + MAX_DELTA_CHARS),
    });
    await em.query('SELECT pg_notify($1, $2)', [SESSION_PREVIEWS_CHANNEL, payload]);
  }
}

/** A notice on the channel: an appended event (`<session id>:<seq>`) or a preview. */
export function parseSessionNotice(
  payload: string,
): { kind: 'event'; sessionId: string } | ({ kind: 'delta' } & MessageDelta) | undefined {
  if (payload.startsWith('{')) {
    try {
      const d = JSON.parse(payload) as { s: string; e: string; i: number; t: string; k?: string };
      return {
        kind: 'delta',
        sessionId: d.s,
        eventId: d.e,
        index: d.i,
        text: d.t,
        ...(d.k === 'agent.thinking' ? { eventType: 'agent.thinking' as const } : {}),
      };
    } catch {
      return undefined;
    }
  }
  const colon = payload.indexOf(':');
  return colon > 0 ? { kind: 'event', sessionId: payload.slice(0, colon) } : undefined;
}

/**
 * The Session log repository (ADR 0005 "Aggregates own their SQL"): the one place that writes a
 * Session's events, its status projection (through `nextSessionStatus`, libs/domain/sessions), its
 * outbox rows and its notices. The Work it needs goes through {@link SessionWorkPort}. A plain class:
 * Nest apps get it from `PersistenceModule`, activities construct it with their DataSource.
 */
export class SessionLog {
  constructor(
    private readonly dataSource?: DataSource,
    private readonly work: SessionWorkPort = workItemSessionWork,
    private readonly threads: SessionThreadRepository = new SessionThreadRepository(),
  ) {}

  /** The Session's row locked FOR UPDATE (appends take the next sequence on it), or null. */
  lock(tx: EntityManager, sessionId: string): Promise<SessionEntity | null> {
    return tx.findOne(SessionEntity, { where: { id: sessionId }, lock: { mode: 'pessimistic_write' } });
  }

  /**
   * Runs `fn` in a transaction holding the Session's row lock, or answers undefined without calling it
   * when the Session is deleted or terminated (nothing more is recorded for it).
   */
  async withOpenSession<T>(
    sessionId: string,
    fn: (tx: EntityManager, s: SessionEntity) => Promise<T>,
  ): Promise<T | undefined> {
    return this.ds().transaction(async (tx) => {
      const s = await this.lock(tx, sessionId);
      if (!s || s.deletedAt || s.status === 'terminated') return undefined;
      return fn(tx, s);
    });
  }

  /**
   * Appends events to a Session whose row the caller holds FOR UPDATE: each takes the next gapless
   * sequence. In the same transaction: an outbox row for each event that wakes the workflow, the status
   * projected through the Session status machine, runnable input creates (or coalesces into) the
   * Session's live Work item; NOTIFY says "look now" on commit. Events whose idempotency key is already
   * in the log are skipped (activity retries) and move nothing. `unrecorded`: the caller established,
   * under this same row lock, that none of the keys is in the log, so they are not looked up again.
   */
  async append(
    tx: EntityManager,
    session: SessionEntity,
    events: NewSessionEvent[],
    now: Date,
    { unrecorded = false }: { unrecorded?: boolean } = {},
  ): Promise<SessionEventEntity[]> {
    const keys = events.map((e) => e.idempotencyKey).filter((k): k is string => Boolean(k));
    const seen = new Set<string>();
    if (keys.length && !unrecorded) {
      const found: Array<{ k: string }> = await tx.query(
        'SELECT idempotency_key AS k FROM session_events WHERE session_id = $1 AND idempotency_key = ANY($2::text[])',
        [session.id, keys],
      );
      for (const f of found) seen.add(f.k);
    }
    let seq = BigInt(session.lastSeq);
    const rows: SessionEventEntity[] = [];
    // Outbox rows only for kinds that wake the workflow (ADR 0007): sequence and kind of each.
    const outbox: Array<{ seq: string; kind: string; sessionThreadId: string | null }> = [];
    const fresh: NewSessionEvent[] = [];
    for (const e of events) {
      if (e.idempotencyKey && seen.has(e.idempotencyKey)) continue;
      if (e.idempotencyKey) seen.add(e.idempotencyKey);
      seq += 1n;
      fresh.push(e);
      rows.push(
        tx.create(SessionEventEntity, {
          id: e.id ?? newId('sessionEvent', now.getTime()),
          sessionId: session.id,
          seq: seq.toString(),
          type: e.type,
          body: e.body,
          sessionThreadId: e.sessionThreadId ?? null,
          idempotencyKey: e.idempotencyKey ?? null,
          toolUseId: e.toolUseId ?? null,
          processedAt: e.processed ? now : null,
          createdAt: now,
        }),
      );
      const kind = e.outboxKind ?? e.type;
      if (wakesWorkflow(kind))
        outbox.push({ seq: seq.toString(), kind, sessionThreadId: e.sessionThreadId ?? null });
    }
    const runnable = events.some((e) => e.runnable);
    session.lastSeq = seq.toString();
    session.updatedAt = now;
    // The only writer of sessions.status: what the status machine answers for the appended events —
    // or, once the Session has delegate Threads, what their statuses make (running while any runs).
    // Each Thread's status, through the Thread status machine, for the same events (ADR 0017); the
    // precedence between the two machines is the domain's (`sessionStatusAfter`).
    const { statuses } = await this.threads.projectStatus(tx, session.id, fresh, now);
    session.status = sessionStatusAfter(projectSessionStatus(session.status, fresh), statuses);
    const projection = [
      session.lastSeq,
      now,
      session.status,
      SESSION_EVENTS_CHANNEL,
      `${session.id}:${session.lastSeq}`,
    ];
    if (rows.length) {
      // The events, their outbox rows, the projection, the "look now" notice and (when there are outbox
      // rows) the relay's wake-up in one statement: one round trip per append.
      await runStatement(
        tx,
        'mango_session_append',
        APPEND_SQL,
        appendValues({
          sessionId: session.id,
          now,
          rows,
          outbox,
          lastSeq: session.lastSeq,
          status: session.status,
        }),
      );
      // Lifecycle events announce themselves to subscribed webhooks in the same transaction.
      await recordWebhookEvents(tx, session.workspaceId, sessionWebhookEvents(session.id, rows), now);
    } else {
      // Nothing new (every event was already in the log): the projection and the notice as always.
      await runStatement(tx, 'mango_session_append_none', PROJECT_SQL, [session.id, ...projection]);
    }
    if (runnable) await this.work.ensureSessionWork(tx, session, now);
    return rows;
  }

  /**
   * A reader of one Session's log for one step: its first `read` loads the whole log, later ones only the
   * events appended since, so a step reads the log once however often it looks (ADR 0004). With a
   * `cache`, the first read starts from what an earlier step of this process read and loads only the
   * events appended since. Call `read` before the transaction writes anything (it keeps what it saw).
   */
  reader(sessionId: string, cache?: SessionLogCache): SessionLogReader {
    let events: SessionEventEntity[] | undefined;
    return {
      async read(tx) {
        events ??= cache?.get(sessionId) ?? [];
        const after = events.length ? events[events.length - 1]!.seq : '0';
        const more = await tx
          .createQueryBuilder(SessionEventEntity, 'e')
          .where('e.session_id = :sessionId AND e.seq > :after', { sessionId, after })
          .orderBy('e.seq', 'ASC')
          .getMany();
        events = events.concat(more);
        cache?.keep(sessionId, events);
        return events;
      },
    };
  }

  /**
   * Paused at the budget gate (`pausedAtBudget`, libs/domain/sessions session-resume.ts): the fold of the
   * primary's start-from-log columns from its last turn start on (which answers as the whole log's). A
   * Session that is not idle, or has no budget, is not paused (removing the budget is itself what lifts one).
   */
  async pausedAtBudget(
    em: EntityManager,
    session: Pick<SessionEntity, 'id' | 'status' | 'budget'>,
  ): Promise<boolean> {
    if (session.status !== 'idle' || session.budget === null) return false;
    const rows: ResumeRow[] = await em.query(
      `SELECT seq, type, idempotency_key, body->'stop_reason'->>'type' AS stop_reason,
              (type = 'session.updated' AND body ? 'budget') AS budget_changed
         FROM session_events
        WHERE session_id = $1 AND session_thread_id IS NULL
          AND (starts_with(idempotency_key, 'turn:') OR (type = 'session.updated' AND body ? 'budget'))
          AND seq >= COALESCE((SELECT max(seq) FROM session_events
                                WHERE session_id = $1 AND session_thread_id IS NULL
                                  AND type = 'session.status_running' AND idempotency_key LIKE 'turn:%:running'), 0)
        ORDER BY seq`,
      [session.id],
    );
    return pausedAtBudget(resumeStateFromLog(rows.map(resumeEventOf)));
  }

  /**
   * The trace a turn continues (`turnTraceparent`, libs/domain/sessions): the `_traceparent` of the
   * latest {@link TURN_ORIGIN_TYPE} — before `beforeSeq` when given (the turn an older call belongs to).
   */
  async turnTraceparent(
    em: EntityManager,
    sessionId: string,
    beforeSeq?: string,
  ): Promise<string | undefined> {
    const [row]: Array<{ body: Record<string, unknown> }> = await em.query(
      `SELECT jsonb_build_object('_traceparent', body->'_traceparent') AS body FROM session_events
        WHERE session_id = $1 AND type = $2 AND ($3::bigint IS NULL OR seq < $3::bigint)
        ORDER BY seq DESC LIMIT 1`,
      [sessionId, TURN_ORIGIN_TYPE, beforeSeq ?? null],
    );
    return traceparentOf(row?.body);
  }

  /** The events whose idempotency key starts with `prefix` (e.g. one step's tool calls), in order. */
  eventsByKeyPrefix(tx: EntityManager, sessionId: string, prefix: string): Promise<SessionEventEntity[]> {
    return tx
      .createQueryBuilder(SessionEventEntity, 'e')
      .where('e.session_id = :sessionId AND starts_with(e.idempotency_key, :prefix)', { sessionId, prefix })
      .orderBy('e.seq', 'ASC')
      .getMany();
  }

  /**
   * What a Session workflow's start-from-log read needs (docs/adr/0016-session-workflow-rebuilt-from-the-log.md):
   * the Session's status and whether it is deleted (null when there is no such Session), and the few
   * columns of the log events that say where its workflow stands — turn keys, turn-starting input,
   * interrupts, budget changes and the terminal events, never bodies — in sequence order.
   */
  async resumeLog(
    sessionId: string,
    threadId?: string,
  ): Promise<{
    session: { status: string; deleted: boolean } | null;
    events: ResumeLogEvent[];
    /** The Thread's row (a Thread's fold only): whether it still takes turns. */
    thread?: { open: boolean };
  }> {
    const [session]: Array<{ status: string; deleted: boolean }> = await this.ds().query(
      'SELECT status, deleted_at IS NOT NULL AS deleted FROM sessions WHERE id = $1',
      [sessionId],
    );
    let thread: { open: boolean } | undefined;
    if (threadId) {
      const [row]: Array<{ open: boolean }> = await this.ds().query(
        `SELECT (status <> 'terminated' AND archived_at IS NULL AND archive_requested_at IS NULL) AS open
           FROM session_threads WHERE id = $1 AND session_id = $2`,
        [threadId, sessionId],
      );
      thread = { open: row?.open === true };
    }
    // A Thread's fold (ADR 0017): its own events (keys under `thread:<id>:`), and the Session-wide
    // ones without a Thread (interrupts, budget changes, the terminal events); the primary's are those
    // without a Thread.
    const prefix = threadKeyPrefix(threadId);
    const rows: Array<ResumeRow & { session_thread_id: string | null }> = await this.ds().query(
      `SELECT seq, type, idempotency_key, body->'stop_reason'->>'type' AS stop_reason,
              (type = 'session.updated' AND body ? 'budget') AS budget_changed, session_thread_id
         FROM session_events
        WHERE session_id = $1
          AND (starts_with(idempotency_key, $2) OR type = ANY($4::text[]))
          AND (session_thread_id IS NOT DISTINCT FROM $3
               OR ($3::text IS NOT NULL AND session_thread_id IS NULL AND type = ANY($5::text[])))
        ORDER BY seq`,
      [sessionId, `${prefix}turn:`, threadId ?? null, RESUME_LOG_TYPES, SESSION_WIDE_RESUME_TYPES],
    );
    // A delegate's own status events read as the Session's (threadLog's rule), so one fold serves all.
    const own = threadId
      ? rows.map((r) => (r.session_thread_id === threadId ? { ...r, type: asOwnType(r.type) } : r))
      : rows;
    return {
      session: session ?? null,
      ...(thread ? { thread } : {}),
      events: own.map((r) =>
        resumeEventOf({ ...r, idempotency_key: unprefixedKey(r.idempotency_key, threadId) }),
      ),
    };
  }

  /** How many of the listed tool calls have their user.tool_result in the log. */
  async countToolResults(sessionId: string, toolUseIds: string[]): Promise<number> {
    const rows: Array<{ n: string }> = await this.ds().query(
      `SELECT count(*) AS n FROM session_events WHERE session_id = $1 AND tool_use_id = ANY($2::text[])`,
      [sessionId, toolUseIds],
    );
    return Number(rows[0]!.n);
  }

  /** The Session's cumulative usage (tokens, list cost, active seconds), in the caller's transaction. */
  async saveUsage(
    tx: EntityManager,
    session: SessionEntity,
    usage: Record<string, unknown>,
    thread?: { id: string; usage: Record<string, unknown> },
  ): Promise<void> {
    session.usage = usage;
    if (thread) {
      // A delegate's request (ADR 0017 "Budget"): the Session's usage (what the budget gate reads) and
      // the delegate's own, in one transaction.
      await tx.query('UPDATE sessions SET usage = $2::jsonb WHERE id = $1', [
        session.id,
        JSON.stringify(usage),
      ]);
      await this.threads.saveUsage(tx, thread.id, thread.usage);
      return;
    }
    // The primary Thread's usage is the Session's (delegates' requests add to the Session's too, so the
    // primary's row shows the Session's whole usage, as the Thread read of the primary always did).
    await tx.query(
      `WITH s AS (UPDATE sessions SET usage = $2::jsonb WHERE id = $1 RETURNING id)
       UPDATE session_threads SET usage = $2::jsonb WHERE id = $3 AND session_id IN (SELECT id FROM s)`,
      [session.id, JSON.stringify(usage), primaryThreadId(session.id)],
    );
  }

  /**
   * A permanent input failure reported by the worker ends its Session (docs/api-guide.md "Work",
   * Fail): `session.error` (`session_input_failed_error`, terminal) and `session.status_terminated`, in
   * the caller's transaction. Nothing happens to a missing, deleted or already terminated Session.
   * For the Work repository (work-core), instead of writing the Session's rows itself.
   */
  async terminate(tx: EntityManager, sessionId: string, message: string, now: Date): Promise<void> {
    const session = await this.lock(tx, sessionId);
    if (!session || session.deletedAt || session.status === 'terminated') return;
    // A Fail ends every Thread (ADR 0017): each live delegate's own terminated event, then the Session's.
    const children = await this.threads.liveChildren(tx, sessionId);
    const agent = session.agent as Parameters<typeof threadAgentName>[0];
    await this.append(
      tx,
      session,
      [
        ...children.map((c) => ({
          type: 'session.thread_status_terminated',
          body: { session_thread_id: c.id, agent_name: threadAgentName(agent, c.agentRef) },
          sessionThreadId: c.id,
          processed: true,
          runnable: false,
        })),
        {
          type: 'session.error',
          body: {
            error: { type: 'session_input_failed_error', message, retry_status: { type: 'terminal' } },
          },
          processed: true,
          runnable: false,
        },
        { type: 'session.status_terminated', body: {}, processed: true, runnable: false },
      ],
      now,
    );
  }

  /** Deletes a Session whose row the caller holds: `session.deleted`, `deleted_at`, and its Work stopped. */
  async delete(tx: EntityManager, session: SessionEntity, now: Date): Promise<void> {
    await this.append(
      tx,
      session,
      [{ type: 'session.deleted', body: {}, processed: true, runnable: false }],
      now,
    );
    session.deletedAt = now;
    await tx.update(SessionEntity, { id: session.id }, { deletedAt: now });
    await this.work.stopSessionWork(tx, session.id, now);
  }

  /** Publishes a preview of an agent.message being generated (best effort). */
  publishDelta(delta: MessageDelta): Promise<void> {
    return publishDelta(this.ds(), delta);
  }

  private ds(): DataSource {
    if (!this.dataSource) throw new Error('this SessionLog was built without a DataSource');
    return this.dataSource;
  }
}
