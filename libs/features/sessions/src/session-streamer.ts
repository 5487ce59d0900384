import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError, ErrorCode, invalidRequest, notFound } from '@mango/domain-kernel';
import {
  type Principal,
  requireLiveToken,
  WORK_TOKEN_AUTHENTICATOR,
  type WorkTokenAuthenticator,
} from '@mango/feature-auth';
import { sseFrame, type SseFrame, sseWriter } from '@mango/platform-http';
import { isId } from '@mango/platform-ids';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import { MessageDelta, primaryThreadId, SessionEntity, SessionEventEntity } from '@mango/persistence';
import { rowVisibleOn } from './session-thread-reads';
import type { Request, Response } from 'express';
import { DataSource, IsNull } from 'typeorm';
import { renderEvent } from './session.view';
import { SessionStreamHub } from './session-stream-hub';
import {
  DEFAULT_SESSION_SERVICE_LIMITS,
  SESSION_SERVICE_LIMITS,
  type SessionServiceLimits,
} from './sessions.service';

/** The `retry-after` (seconds) sent with a 429 for a process at its stream limit. */
const STREAMS_RETRY_AFTER_S = 5;

const frames = new WeakMap<SessionEventEntity, SseFrame>();
/**
 * One SSE frame per event (`id:` is the sequence), rendered, UTF-8 encoded and framed as an HTTP chunk once
 * however many streams carry it: every stream writes the same bytes.
 */
function frameOf(row: SessionEventEntity): SseFrame {
  let frame = frames.get(row);
  if (!frame) {
    frame = sseFrame(`id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(renderEvent(row))}\n\n`);
    frames.set(row, frame);
  }
  return frame;
}

const PING = sseFrame(`event: ping\ndata: {}\n\n`);

/** `event_deltas[]`: the event types whose previews this connection wants (openapi.yaml `SessionStreamFrame`). */
function parseEventDeltas(query: Record<string, unknown>): Set<string> {
  const raw = [query.event_deltas, query['event_deltas[]']].flat().filter((v) => v !== undefined);
  const types = new Set<string>();
  for (const v of raw) {
    if (v !== 'agent.message' && v !== 'agent.thinking')
      throw invalidRequest('event_deltas[] accepts agent.message and agent.thinking');
    types.add(v);
  }
  return types;
}

/**
 * Preview frames of one connection: at most one `event_start` per event id, `event_delta`s after it,
 * nothing once the buffered event itself was delivered (it is the last thing sent for its id).
 */
function previewFrames(write: (frame: string) => void, wanted: Set<string>) {
  const started = new Set<string>();
  const done: string[] = [];
  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  return {
    delta: (d: MessageDelta) => {
      if (done.includes(d.eventId)) return;
      if (d.eventType === 'agent.thinking') {
        // agent.thinking previews are a start only: the event has no content to stream.
        if (!wanted.has('agent.thinking') || started.has(d.eventId)) return;
        started.add(d.eventId);
        write(sse('event_start', { type: 'event_start', event: { type: 'agent.thinking', id: d.eventId } }));
        return;
      }
      if (!wanted.has('agent.message')) return;
      if (!started.has(d.eventId)) {
        started.add(d.eventId);
        write(sse('event_start', { type: 'event_start', event: { type: 'agent.message', id: d.eventId } }));
      }
      write(
        sse('event_delta', {
          type: 'event_delta',
          event_id: d.eventId,
          delta: { type: 'content_delta', index: d.index, content: { type: 'text', text: d.text } },
        }),
      );
    },
    completed: (id: string) => {
      started.delete(id);
      done.push(id);
      if (done.length > 64) done.shift();
    },
  };
}

/** Keep-alive frames at most every 15 s (docs/api-guide.md "Sessions — choices"). */
export const KEEPALIVE_MS = 15_000;
/** A Work token's stream re-checks that it still owns the Session this often (docs/api-guide.md "Sessions — choices"). */
export const OWNERSHIP_CHECK_MS = 1_000;

/**
 * Session streams (`…/events/stream`, and the primary Thread's `…/threads/{id}/stream`) — Server-Sent
 * Events over the durable log. Every frame carries
 * `id: <sequence>`; `Last-Event-ID` (header or `?last_event_id=`) resumes after that sequence with no gap
 * and no duplicate, for the whole life of the Session. The stream ends after `session.deleted`.
 */
@Injectable()
export class SessionStreamer {
  /** Streams this process serves now (bounded by `limits.streams`). */
  private open_ = 0;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly hub: SessionStreamHub,
    @Optional() @Inject(WORK_TOKEN_AUTHENTICATOR) private readonly workTokens?: WorkTokenAuthenticator,
    @Optional()
    @Inject(SESSION_SERVICE_LIMITS)
    private readonly limits: SessionServiceLimits = DEFAULT_SESSION_SERVICE_LIMITS,
  ) {}

  /** Streams open on this process right now. */
  get openStreams(): number {
    return this.open_;
  }

  /** The token still owns the Session right now (same Work item, lease live for reading). */
  private async stillOwns(p: Extract<Principal, { kind: 'work' }>, sessionId: string): Promise<boolean> {
    const now = await this.workTokens?.authenticate(p.tokenDigest);
    return Boolean(now?.live && now.workId === p.workId && now.sessionId === sessionId);
  }

  /** Opens a Session's stream (also the primary Thread's stream, which carries the same events). */
  async open(
    p: Principal,
    sessionId: string,
    query: Record<string, unknown>,
    lastEventHeader: string | undefined,
    req: Request,
    res: Response,
    /** A Thread's stream shows only the rows this answers true for (ADR 0017); the Session's shows all. */
    visible?: (row: SessionEventEntity) => boolean,
  ): Promise<void> {
    rejectUnknownQuery(query, ['last_event_id', 'event_deltas', 'event_deltas[]']);
    const deltas = parseEventDeltas(query);
    const raw = lastEventHeader ?? (query.last_event_id as string | undefined);
    if (raw !== undefined && !/^\d{1,18}$/.test(String(raw)))
      throw invalidRequest('Last-Event-ID must be an event sequence number from this stream');
    if (!isId('session', sessionId)) throw notFound('session', sessionId);
    requireLiveToken(p);
    if (p.kind === 'work' && p.sessionId !== sessionId) throw notFound('session', sessionId);
    const session = await this.dataSource.manager.findOne(SessionEntity, {
      where: { id: sessionId, workspaceId: p.workspaceId, deletedAt: IsNull() },
    });
    if (!session) throw notFound('session', sessionId);
    // The Session's own stream is its primary Thread's for a Workspace key; the Work token sees every Thread.
    if (!visible && p.kind !== 'work') {
      const primary = { kind: 'thread' as const, threadId: primaryThreadId(session.id), primary: true };
      visible = (row) => rowVisibleOn(primary, row);
    }
    // Counted only once the stream is sure to open; a request beyond the limit changes nothing.
    if (this.open_ >= this.limits.streams) {
      res.setHeader('retry-after', String(STREAMS_RETRY_AFTER_S));
      throw new DomainError(
        ErrorCode.RateLimited,
        `this API process already serves ${this.limits.streams} event streams (MANGO_MAX_SSE_STREAMS); retry after one closes`,
      );
    }
    this.open_ += 1;

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const write = sseWriter(req, res);

    let closed = false;
    const previews = previewFrames((frame) => !closed && write(frame), deltas);
    const finish = () => {
      if (closed) return;
      closed = true;
      this.open_ -= 1;
      clearInterval(keepalive);
      clearInterval(ownership);
      unsubscribe();
      res.end();
    };
    // Rendered once per event and shared by every stream of the Session.
    const unsubscribe = this.hub.subscribe(sessionId, {
      last: BigInt(raw ?? '0'),
      deliver: (row) => {
        if (closed || (visible && !visible(row))) return;
        if (row.type === 'agent.message' || row.type === 'agent.thinking') previews.completed(row.id);
        write(frameOf(row));
        if (row.type === 'session.deleted') finish();
      },
      end: () => finish(),
      ...(deltas.size ? { delta: previews.delta } : {}),
    });
    const keepalive = setInterval(() => write(PING), KEEPALIVE_MS);
    // A Work token's stream lives only as long as its lease: after Stop, expiry or a reclaim it ends
    // with an error frame, so a stale worker stops seeing its successor's events.
    const ownership =
      p.kind === 'work'
        ? setInterval(() => {
            this.stillOwns(p, sessionId).then(
              (owns) => {
                if (owns || closed) return;
                write(
                  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'the Work token no longer owns this session' } })}\n\n`,
                );
                finish();
              },
              () => undefined, // a failed check is retried next second
            );
          }, OWNERSHIP_CHECK_MS)
        : undefined;
    req.on('close', finish);
  }
}
