import type { ServerResponse } from 'node:http';
import { MangoClient } from './client';
import { ConnectionError, MangoError, NotFoundError, RequestAbortedError } from './errors';
import { SseParser } from './sse';
import { deletedEventFixture, messageEventFixture, sessionFixture } from './testing/fixtures';
import {
  dropConnection,
  errorEnvelope,
  Handler,
  json,
  newRequestId,
  TestServer,
} from './testing/test-server';
import type { Page, Session, SessionEvent, SessionList, SessionStreamEvent } from './types';

const SID = 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB';

const sseHead = (res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': newRequestId() });
  res.flushHeaders();
};

const frame = (seq: number, event: SessionEvent): string =>
  `id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** A Session whose log is `n` user messages followed by `session.deleted` (sequence numbers 1…n+1). */
const log = (n: number): SessionEvent[] => [
  ...Array.from({ length: n }, (_, i) => messageEventFixture(i + 1)),
  deletedEventFixture(n + 1),
];

/**
 * Serves `events` after the request's `Last-Event-ID` (like the real server) up to sequence `upTo`,
 * then drops the socket (optionally mid-frame), closes cleanly, or keeps the connection open.
 */
const serveLog =
  (
    events: SessionEvent[],
    opts: {
      upTo?: number;
      then?: 'drop' | 'close' | 'hang';
      partial?: boolean;
      ignoreLastEventId?: boolean;
    } = {},
  ): Handler =>
  (req, res) => {
    const after = opts.ignoreLastEventId ? 0 : Number(req.headers['last-event-id'] ?? 0);
    const upTo = Math.min(opts.upTo ?? events.length, events.length);
    sseHead(res);
    let out = '';
    for (let seq = after + 1; seq <= upTo; seq++) out += frame(seq, events[seq - 1]!);
    if (opts.partial && upTo < events.length) out += frame(upTo + 1, events[upTo]!).slice(0, 40);
    const then = opts.then ?? 'hang';
    res.write(out, () => {
      if (then === 'drop') setTimeout(() => res.socket?.destroy(), 20);
      if (then === 'close') res.end();
    });
  };

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

describe('client.sessions', () => {
  let server: TestServer;
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', maxRetries: 0 });
  });

  afterEach(async () => {
    await server.close();
  });

  it('create POSTs the request body to /v1/sessions', async () => {
    const created = sessionFixture(SID, { status: 'running', title: 't' });
    server.script(json(201, created));
    const params = {
      agent: { type: 'agent_with_overrides' as const, id: 'agent_1', version: 2, system: null },
      environment_id: 'env_1',
      title: 't',
      initial_events: [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
      budget: { type: 'limit' as const, max_list_cost: { amount: '2500', currency: 'USD' as const } },
      metadata: { k: 'v' },
    };
    await expect(client.sessions.create(params)).resolves.toEqual(created);
    const req = server.lastRequest;
    expect([req.method, req.url]).toEqual(['POST', '/v1/sessions']);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.authorization).toBe('Bearer mango_ak_x');
    expect(req.json).toEqual(params);
  });

  it('retrieve GETs /v1/sessions/{id} with the id encoded as one segment', async () => {
    server.script(json(200, sessionFixture()), json(200, sessionFixture()));
    await expect(client.sessions.retrieve(SID)).resolves.toEqual(sessionFixture());
    await client.sessions.retrieve('a/b c');
    expect(server.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['GET', `/v1/sessions/${SID}`, ''],
      ['GET', '/v1/sessions/a%2Fb%20c', ''],
    ]);
    expect(() => client.sessions.retrieve('')).toThrow(TypeError);
  });

  it('update POSTs the patch, keeping explicit nulls', async () => {
    server.script(json(200, sessionFixture(SID, { title: null })));
    await client.sessions.update(SID, { title: null, metadata: { a: 'b', gone: null }, budget: null });
    expect(server.lastRequest.method).toBe('POST');
    expect(server.lastRequest.url).toBe(`/v1/sessions/${SID}`);
    expect(server.lastRequest.body).toBe('{"title":null,"metadata":{"a":"b","gone":null},"budget":null}');
  });

  it('archive POSTs with no body and delete returns the tombstone', async () => {
    server.script(
      json(200, sessionFixture(SID, { archived_at: '2026-01-03T00:00:00.000Z' })),
      json(200, { id: SID, type: 'session_deleted' }),
    );
    await expect(client.sessions.archive(SID)).resolves.toMatchObject({
      archived_at: '2026-01-03T00:00:00.000Z',
    });
    await expect(client.sessions.delete(SID)).resolves.toEqual({ id: SID, type: 'session_deleted' });
    expect(server.requests.map((r) => [r.method, r.url, r.body, r.headers['content-type']])).toEqual([
      ['POST', `/v1/sessions/${SID}/archive`, '', undefined],
      ['DELETE', `/v1/sessions/${SID}`, '', undefined],
    ]);
  });

  it('maps an error envelope to a typed error', async () => {
    server.script(errorEnvelope(404, 'not_found_error', 'no such session'));
    await expect(client.sessions.retrieve(SID)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('list encodes every filter the way the server parses it', async () => {
    server.script(json(200, { data: [], next_page: null, prev_page: null }));
    await client.sessions.list({
      limit: 5,
      order: 'asc',
      agent_id: 'agent_1',
      agent_version: 3,
      statuses: ['idle', 'running'],
      include_archived: true,
      created_at: {
        gt: '2026-01-01T00:00:00.000Z',
        gte: new Date('2026-01-02T00:00:00.000Z'),
        lt: '2026-02-01T00:00:00.000Z',
        lte: '2026-02-02T00:00:00.000Z',
      },
    });
    expect(server.lastRequest.url).toBe(
      '/v1/sessions?limit=5&order=asc&agent_id=agent_1&agent_version=3&statuses[]=idle&statuses[]=running' +
        '&include_archived=true&created_at[gt]=2026-01-01T00%3A00%3A00.000Z' +
        '&created_at[gte]=2026-01-02T00%3A00%3A00.000Z&created_at[lt]=2026-02-01T00%3A00%3A00.000Z' +
        '&created_at[lte]=2026-02-02T00%3A00%3A00.000Z',
    );
    expect(server.lastRequest.query.getAll('statuses[]')).toEqual(['idle', 'running']);
  });

  it('list pages forward with next_page, keeping the filters, and exposes prev_page', async () => {
    server.script(
      json(200, {
        data: [sessionFixture('sesn_1'), sessionFixture('sesn_2')],
        next_page: 'p2',
        prev_page: null,
      }),
      json(200, { data: [sessionFixture('sesn_3')], next_page: null, prev_page: 'p1' }),
    );
    const list = client.sessions.list({ limit: 2, statuses: ['idle'] });
    const first: SessionList = await list;
    expect(first.prev_page).toBeNull();
    const seen: string[] = [];
    for await (const s of list) seen.push((s satisfies Session).id);
    expect(seen).toEqual(['sesn_1', 'sesn_2', 'sesn_3']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/sessions?limit=2&statuses[]=idle',
      '/v1/sessions?limit=2&statuses[]=idle&page=p2',
    ]);
  });
});

describe('client.sessions.events', () => {
  let server: TestServer;
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', maxRetries: 0 });
  });

  afterEach(async () => {
    await server.close();
  });

  it('send POSTs { events } and resolves to the persisted events', async () => {
    const persisted = [messageEventFixture(1), { id: 'sevt_2', type: 'user.interrupt', processed_at: null }];
    server.script(json(200, { data: persisted }));
    const events = [
      { type: 'user.message' as const, content: [{ type: 'text' as const, text: 'm1' }] },
      { type: 'user.interrupt' as const },
    ];
    await expect(client.sessions.events.send(SID, { events })).resolves.toEqual({ data: persisted });
    expect([server.lastRequest.method, server.lastRequest.url]).toEqual([
      'POST',
      `/v1/sessions/${SID}/events`,
    ]);
    expect(server.lastRequest.json).toEqual({ events });
  });

  it('list encodes order, types[] and the created_at range, and pages across pages', async () => {
    server.script(
      json(200, { data: [messageEventFixture(1), messageEventFixture(2)], next_page: 'c2' }),
      json(200, { data: [deletedEventFixture(3)], next_page: null }),
    );
    const list = client.sessions.events.list(SID, {
      limit: 2,
      order: 'desc',
      types: ['user.message', 'session.deleted'],
      created_at: { gt: '2026-01-01T00:00:00.000Z', lte: '2026-01-02T00:00:00.000Z' },
    });
    const pages: Array<Page<SessionEvent>> = [];
    for await (const page of list.iterPages()) pages.push(page);
    expect(pages.flatMap((p) => p.data.map((e) => e.type))).toEqual([
      'user.message',
      'user.message',
      'session.deleted',
    ]);
    const base =
      `/v1/sessions/${SID}/events?limit=2&order=desc&types[]=user.message&types[]=session.deleted` +
      '&created_at[gt]=2026-01-01T00%3A00%3A00.000Z&created_at[lte]=2026-01-02T00%3A00%3A00.000Z';
    expect(server.requests.map((r) => r.url)).toEqual([base, `${base}&page=c2`]);
  });
});

describe('client.sessions.events.stream', () => {
  let server: TestServer;

  beforeEach(async () => {
    server = await TestServer.start();
  });

  afterEach(async () => {
    await server.close();
  });

  const clientWith = (opts: { maxRetries?: number; timeoutMs?: number } = {}): MangoClient =>
    new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', ...opts });

  const ids = (items: SessionStreamEvent[]): string[] => items.map((i) => i.id);
  const texts = (items: SessionStreamEvent[]): string[] =>
    items.map(({ event }) =>
      event.type === 'user.message' && event.content[0]?.type === 'text' ? event.content[0].text : event.type,
    );

  it('parses frames, skips pings and comments, joins multi-line data, and ends after session.deleted', async () => {
    const m1 = messageEventFixture(1);
    const m2 = messageEventFixture(2);
    const pretty = JSON.stringify(m2, null, 2).split('\n');
    server.script((_req, res) => {
      sseHead(res);
      res.write(
        ': connected\n\n' +
          'event: ping\ndata: {}\n\n' +
          `id: 1\r\nevent: user.message\r\ndata:${JSON.stringify(m1)}\r\n\r\n` +
          'event: ping\ndata: not json at all\n\n' +
          `id: 2\nevent: user.message\n${pretty.map((l) => `data: ${l}`).join('\n')}\n\n` +
          'event: ping\n\n' +
          'retry: 1000\n\n' +
          `id: 3\nevent: session.deleted\ndata: ${JSON.stringify(deletedEventFixture(3))}\n\n`,
      );
      // The connection stays open: the client must stop by itself.
    });
    const items = await collect(clientWith().sessions.events.stream(SID));
    expect(items).toEqual([
      { id: '1', event: m1 },
      { id: '2', event: m2 },
      { id: '3', event: deletedEventFixture(3) },
    ]);
    const req = server.lastRequest;
    expect([req.method, req.url]).toEqual(['GET', `/v1/sessions/${SID}/events/stream`]);
    expect(req.headers.accept).toBe('text/event-stream');
    expect(req.headers.authorization).toBe('Bearer mango_ak_x');
    expect(req.headers['last-event-id']).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('reassembles frames split across chunks, including a split CRLF and a split UTF-8 character', async () => {
    const m1 = {
      ...messageEventFixture(1),
      content: [{ type: 'text' as const, text: 'héllo ✓' }],
    } as SessionEvent;
    const bytes = Buffer.from(
      `id: 1\r\nevent: user.message\r\ndata: ${JSON.stringify(m1)}\r\n\r\n` +
        frame(2, deletedEventFixture(2)),
    );
    const cut1 = bytes.indexOf('\r') + 1; // between CR and LF
    const cut2 = bytes.indexOf(Buffer.from('✓')) + 1; // inside the 3-byte character
    server.script(async (_req, res) => {
      sseHead(res);
      for (const part of [bytes.subarray(0, cut1), bytes.subarray(cut1, cut2), bytes.subarray(cut2)]) {
        res.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const items = await collect(clientWith().sessions.events.stream(SID));
    expect(items.map((i) => i.event)).toEqual([m1, deletedEventFixture(2)]);
  });

  it('sends Last-Event-ID when resuming from a known id', async () => {
    server.script(serveLog(log(4)));
    const items = await collect(clientWith().sessions.events.stream(SID, { lastEventId: '2' }));
    expect(server.lastRequest.headers['last-event-id']).toBe('2');
    expect(ids(items)).toEqual(['3', '4', '5']);
  });

  it('reconnects after mid-stream drops with Last-Event-ID = last yielded id: no gap, no duplicate', async () => {
    const events = log(6);
    server.script(
      serveLog(events, { upTo: 3, then: 'drop', partial: true }),
      serveLog(events, { upTo: 5, then: 'drop', partial: true }),
      serveLog(events),
    );
    const items = await collect(clientWith({ maxRetries: 1 }).sessions.events.stream(SID));
    expect(ids(items)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(texts(items)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'session.deleted']);
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '3', '5']);
  });

  it('reconnects when the server closes the stream cleanly before session.deleted', async () => {
    const events = log(2);
    server.script(serveLog(events, { upTo: 1, then: 'close' }), serveLog(events));
    const items = await collect(clientWith().sessions.events.stream(SID, { lastEventId: '0' }));
    expect(ids(items)).toEqual(['1', '2', '3']);
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual(['0', '1']);
  });

  it('never yields an event twice even if the server replays from the start', async () => {
    const events = log(3);
    server.script(serveLog(events, { upTo: 2, then: 'drop' }), serveLog(events, { ignoreLastEventId: true }));
    const items = await collect(clientWith().sessions.events.stream(SID));
    expect(ids(items)).toEqual(['1', '2', '3', '4']);
  });

  it('retries a failed (re)connect and gives up after maxRetries consecutive failures', async () => {
    server.script(
      errorEnvelope(503, 'api_error', 'unavailable', undefined, { 'retry-after-ms': '0' }),
      serveLog(log(3), { upTo: 1, then: 'drop' }),
      dropConnection(),
      dropConnection(),
    );
    const seen: string[] = [];
    const run = async (): Promise<void> => {
      for await (const { id } of clientWith({ maxRetries: 2 }).sessions.events.stream(SID)) seen.push(id);
    };
    await expect(run()).rejects.toBeInstanceOf(ConnectionError);
    expect(seen).toEqual(['1']);
    // 503 → retry → event 1 (budget reset) → drop → two failed reconnects (budget 2) → reject.
    expect(server.requests).toHaveLength(4);
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, undefined, '1', '1']);
  });

  it('rejects with the typed error of a non-retryable status without reconnecting', async () => {
    server.script(errorEnvelope(404, 'not_found_error', 'no such session'));
    await expect(collect(clientWith().sessions.events.stream(SID))).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a non-ping frame whose data is not a JSON event', async () => {
    server.script((_req, res) => {
      sseHead(res);
      res.write('id: 1\nevent: user.message\ndata: {oops\n\n');
    });
    const err = await collect(clientWith().sessions.events.stream(SID)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MangoError);
    expect((err as MangoError).type).toBe('api_error');
  });

  it('abort via signal rejects with RequestAbortedError, closes the connection and does not reconnect', async () => {
    let closed!: Promise<void>;
    server.script((req, res) => {
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      return serveLog(log(5), { upTo: 2 })(req, res);
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const run = async (): Promise<void> => {
      for await (const { id } of clientWith().sessions.events.stream(SID, { signal: controller.signal })) {
        seen.push(id);
        if (id === '2') setTimeout(() => controller.abort(), 10);
      }
    };
    await expect(run()).rejects.toBeInstanceOf(RequestAbortedError);
    await closed;
    expect(seen).toEqual(['1', '2']);
    expect(server.requests).toHaveLength(1);
  });

  it('an already-aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const stream = clientWith().sessions.events.stream(SID, { signal: controller.signal });
    await expect(collect(stream)).rejects.toBeInstanceOf(RequestAbortedError);
    expect(server.requests).toHaveLength(0);
  });

  it('breaking out of the loop closes the connection', async () => {
    let closed!: Promise<void>;
    server.script((req, res) => {
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      return serveLog(log(5))(req, res);
    });
    for await (const { id } of clientWith().sessions.events.stream(SID)) if (id === '2') break;
    await closed;
    expect(server.requests).toHaveLength(1);
  });

  it('reconnects when the stream goes silent for timeoutMs', async () => {
    const events = log(2);
    server.script(serveLog(events, { upTo: 1, then: 'hang' }), serveLog(events));
    const items = await collect(clientWith({ timeoutMs: 200 }).sessions.events.stream(SID));
    expect(ids(items)).toEqual(['1', '2', '3']);
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '1']);
  });
});

describe('SseParser', () => {
  it('handles CR, LF and CRLF line ends, field-only lines and a single optional space', () => {
    const parser = new SseParser();
    expect(parser.push('id: 7\rdata:  two spaces\r\ndata\nevent:x\n\n')).toEqual([
      { id: '7', event: 'x', data: ' two spaces\n' },
    ]);
  });

  it('does not dispatch frames without data, nor carry ids or event names into the next frame', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\nevent: ping\n\n')).toEqual([]);
    expect(parser.push('data: a\n\n')).toEqual([{ id: undefined, event: 'message', data: 'a' }]);
  });

  it('waits for the rest of a line or of a CRLF split across pushes', () => {
    const parser = new SseParser();
    expect(parser.push('data: he')).toEqual([]);
    expect(parser.push('llo\r')).toEqual([]);
    expect(parser.push('\n\r')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: undefined, event: 'message', data: 'hello' }]);
  });
});
