import {
  aborted,
  connectionFailure,
  HttpClient,
  pathSegment,
  RequestOptions,
  retryDelayMs,
  sleep,
} from '../core';
import { ConnectionError, MangoError } from '../errors';
import { PagePromise } from '../pagination';
import { readSse } from '../sse';
import type {
  Page,
  Session,
  SessionCreateParams,
  SessionDeleted,
  SessionEvent,
  SessionEventListParams,
  SessionEventsSendParams,
  SessionEventsSendResponse,
  SessionEventStreamParams,
  SessionList,
  SessionListParams,
  SessionStreamEvent,
  SessionUpdateParams,
} from '../types';

/** `client.sessions.events` — a Session's durable event log. */
export class SessionEvents {
  constructor(private readonly http: HttpClient) {}

  /** `POST /v1/sessions/{session_id}/events` — appends `user.message` / `user.interrupt` events. */
  send(
    sessionId: string,
    params: SessionEventsSendParams,
    options?: RequestOptions,
  ): Promise<SessionEventsSendResponse> {
    return this.http.request({ method: 'POST', path: this.base(sessionId), body: params, options });
  }

  /** `GET /v1/sessions/{session_id}/events` — the history in sequence order (`order: 'desc'` reverses). */
  list(
    sessionId: string,
    params: SessionEventListParams = {},
    options?: RequestOptions,
  ): PagePromise<SessionEvent> {
    const path = this.base(sessionId);
    return new PagePromise<SessionEvent>(
      (page) =>
        this.http.request<Page<SessionEvent>>({ method: 'GET', path, query: { ...params, page }, options }),
      params.page,
    );
  }

  /**
   * `GET /v1/sessions/{session_id}/events/stream` — the event log as Server-Sent Events, from the
   * beginning or after `lastEventId`. Pings are skipped. When the connection drops (or goes silent for
   * `timeoutMs`) without the caller aborting, it reconnects with `Last-Event-ID` set to the last yielded
   * id, so every event is seen once and in order; `maxRetries` consecutive failed reconnects (with
   * backoff) reject with the last error. Iteration ends after `session.deleted`; aborting `signal`
   * rejects it with `RequestAbortedError`. Nothing is sent until iteration starts.
   *
   * ```ts
   * for await (const { id, event } of client.sessions.events.stream(session.id)) console.log(id, event.type);
   * ```
   */
  stream(
    sessionId: string,
    params: SessionEventStreamParams = {},
    options: RequestOptions = {},
  ): AsyncIterable<SessionStreamEvent> {
    return streamEvents(this.http, `${this.base(sessionId)}/stream`, params, options);
  }

  private base(sessionId: string): string {
    return `/v1/sessions/${pathSegment(sessionId)}/events`;
  }
}

/** `client.sessions` — Sessions running a frozen Agent in an Environment. */
export class Sessions {
  readonly events: SessionEvents;

  constructor(private readonly http: HttpClient) {
    this.events = new SessionEvents(http);
  }

  /** `POST /v1/sessions` — 201 with the Session (`running` when `initial_events` is non-empty). */
  create(params: SessionCreateParams, options?: RequestOptions): Promise<Session> {
    return this.http.request({ method: 'POST', path: '/v1/sessions', body: params, options });
  }

  /** `GET /v1/sessions/{session_id}` */
  retrieve(sessionId: string, options?: RequestOptions): Promise<Session> {
    return this.http.request({ method: 'GET', path: `/v1/sessions/${pathSegment(sessionId)}`, options });
  }

  /** `POST /v1/sessions/{session_id}` — `title`, `metadata` (patch) and `budget`. */
  update(sessionId: string, params: SessionUpdateParams, options?: RequestOptions): Promise<Session> {
    return this.http.request({
      method: 'POST',
      path: `/v1/sessions/${pathSegment(sessionId)}`,
      body: params,
      options,
    });
  }

  /** `GET /v1/sessions` — newest first by default; pages also carry `prev_page`. */
  list(params: SessionListParams = {}, options?: RequestOptions): PagePromise<Session, SessionList> {
    return new PagePromise<Session, SessionList>(
      (page) =>
        this.http.request<SessionList>({
          method: 'GET',
          path: '/v1/sessions',
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `POST /v1/sessions/{session_id}/archive` — read-only afterwards; returns the archived Session. */
  archive(sessionId: string, options?: RequestOptions): Promise<Session> {
    return this.http.request({
      method: 'POST',
      path: `/v1/sessions/${pathSegment(sessionId)}/archive`,
      options,
    });
  }

  /** `DELETE /v1/sessions/{session_id}` — appends `session.deleted`, stops its Work; returns the tombstone. */
  delete(sessionId: string, options?: RequestOptions): Promise<SessionDeleted> {
    return this.http.request({ method: 'DELETE', path: `/v1/sessions/${pathSegment(sessionId)}`, options });
  }
}

/** The reconnecting SSE reader behind every `stream` method (`query`: extra query parameters). */
export async function* streamEvents(
  http: HttpClient,
  path: string,
  params: SessionEventStreamParams,
  options: RequestOptions,
  query?: object,
): AsyncGenerator<SessionStreamEvent, void, undefined> {
  const signal = params.signal ?? options.signal;
  const maxRetries = options.maxRetries ?? http.config.maxRetries;
  const url = `${http.config.baseUrl}${path}`;
  let lastId = params.lastEventId;
  /** Consecutive connections that failed before yielding anything. */
  let failures = 0;
  for (;;) {
    const outcome = await http.openStream({
      path,
      query,
      headers: lastId === undefined ? {} : { 'last-event-id': lastId },
      options: { ...options, signal },
    });
    let error: MangoError;
    let retryHeaders: Headers | undefined;
    if (outcome.kind === 'error') {
      if (!outcome.retryable) throw outcome.error;
      error = outcome.error;
      retryHeaders = outcome.headers;
    } else {
      const { stream } = outcome;
      try {
        for await (const frame of readSse(stream)) {
          if (frame.event === 'ping') continue;
          // Defensive: never yield an event at or before one already yielded.
          if (frame.id !== undefined && lastId !== undefined && !isAfter(frame.id, lastId)) continue;
          const event = parseEvent(frame.data);
          if (frame.id !== undefined) lastId = frame.id;
          failures = 0;
          yield { id: frame.id ?? lastId ?? '', event };
          if (event.type === 'session.deleted') return;
        }
        error = new ConnectionError({ message: `Event stream closed before session.deleted: GET ${url}` });
      } catch (cause) {
        if (signal?.aborted) throw aborted(signal.reason);
        if (cause instanceof MangoError) throw cause;
        error = connectionFailure(
          'GET',
          url,
          cause,
          stream.timedOut,
          options.timeoutMs ?? http.config.timeoutMs,
        );
      } finally {
        stream.close();
      }
    }
    if (failures >= maxRetries) throw error;
    await sleep(retryDelayMs(failures, retryHeaders), signal);
    failures += 1;
  }
}

function parseEvent(data: string): SessionEvent {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch (cause) {
    throw new MangoError({ type: 'api_error', message: 'Invalid JSON in an event stream frame', cause });
  }
  if (event === null || typeof event !== 'object' || typeof (event as { type?: unknown }).type !== 'string') {
    throw new MangoError({ type: 'api_error', message: 'Event stream frame is not a Session event' });
  }
  return event as SessionEvent;
}

/** Whether SSE id `a` comes after `b`; ids that are not both sequence numbers are taken as in order. */
function isAfter(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return true;
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  return x.length !== y.length ? x.length > y.length : x > y;
}
