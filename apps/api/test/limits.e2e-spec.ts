import { ApiUnderTest, httpClient, HttpClient, startApi } from '@mango/testing';

/**
 * Limits that protect one API process (MANGO_MAX_REQUEST_BYTES, MANGO_MAX_EVENTS_PER_REQUEST,
 * MANGO_MAX_SSE_STREAMS), set deliberately small here: beyond each the API answers 413 request_too_large
 * or 429 rate_limit_error with a clear message, and nothing changes.
 */
describe('service limits (real API and PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let key: string;
  let agent: string;
  let env: string;

  beforeAll(async () => {
    api = await startApi('limits', {
      MANGO_MAX_REQUEST_BYTES: '4096',
      MANGO_MAX_EVENTS_PER_REQUEST: '3',
      MANGO_MAX_SSE_STREAMS: '2',
    });
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    agent = (await ws.post('/v1/agents', { name: 'limits', model: 'claude-sonnet-4-6' })).body.id;
    env = (await ws.post('/v1/environments', { name: 'limits' })).body.id;
  }, 120_000);

  afterAll(async () => {
    await api?.close();
  });

  const interrupt = { type: 'user.interrupt' };
  const count = async (table: string) => Number((await api.sql(`SELECT count(*) AS n FROM ${table}`))[0].n);

  it('a body over MANGO_MAX_REQUEST_BYTES is 413 naming the limit; nothing is stored', async () => {
    const session = (await ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
    const before = await count('session_events');
    const res = await ws.post(`/v1/sessions/${session}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(5000) }] }],
    });
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('request_too_large');
    expect(res.body.error.message).toMatch(/at most 4096 bytes/);
    expect(await count('session_events')).toBe(before);
    // Just under the limit is admitted.
    const ok = await ws.post(`/v1/sessions/${session}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(3000) }] }],
    });
    expect(ok.status).toBe(200);
  });

  it('more events than MANGO_MAX_EVENTS_PER_REQUEST is 413, whole; at the limit they are appended', async () => {
    const session = (await ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
    const events = () => api.sql('SELECT seq FROM session_events WHERE session_id = $1', [session]);
    const outbox = () => api.sql('SELECT id FROM outbox WHERE session_id = $1', [session]);
    const before = { events: (await events()).length, outbox: (await outbox()).length };
    const res = await ws.post(`/v1/sessions/${session}/events`, {
      events: [interrupt, interrupt, interrupt, interrupt],
    });
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('request_too_large');
    expect(res.body.error.message).toMatch(/4 events.*at most 3 per request/);
    expect((await events()).length).toBe(before.events);
    expect((await outbox()).length).toBe(before.outbox);
    const ok = await ws.post(`/v1/sessions/${session}/events`, { events: [interrupt, interrupt, interrupt] });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(3);
    // The contract's own cap (100) is still a validation error.
    const huge = await ws.post(`/v1/sessions/${session}/events`, {
      events: Array.from({ length: 101 }, () => interrupt),
    });
    expect(huge.status).toBe(400);
  });

  it('initial_events beyond the limit are 413 and no Session is created', async () => {
    const sessions = await count('sessions');
    const msg = { type: 'user.message', content: [{ type: 'text', text: 'hi' }] };
    const res = await ws.post('/v1/sessions', {
      agent,
      environment_id: env,
      initial_events: [msg, msg, msg, msg],
    });
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('request_too_large');
    expect(res.body.error.message).toMatch(/initial_events carries 4 events/);
    expect(await count('sessions')).toBe(sessions);
  });

  it('one SSE stream more than MANGO_MAX_SSE_STREAMS is 429 with retry-after; a closed stream frees its place', async () => {
    const session = (await ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(`${api.url}/v1/sessions/${session}/events/stream`, {
        headers: { authorization: `Bearer ${key}` },
        signal: controller.signal,
      });
      return { res, close: () => controller.abort() };
    };
    const a = await open();
    const b = await open();
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
    try {
      const refused = await ws.get(`/v1/sessions/${session}/events/stream`);
      expect(refused.status).toBe(429);
      expect(refused.body.error.type).toBe('rate_limit_error');
      expect(refused.body.error.message).toMatch(/already serves 2 event streams/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The primary Thread's stream counts against the same limit.
      const threads = (await ws.get(`/v1/sessions/${session}/threads`)).body.data as Array<{ id: string }>;
      const thread = await ws.get(`/v1/sessions/${session}/threads/${threads[0]!.id}/stream`);
      expect(thread.status).toBe(429);

      a.close();
      // The server notices the closed connection and frees its place.
      let again: Awaited<ReturnType<typeof open>> | undefined;
      for (let i = 0; i < 50 && !again; i++) {
        const next = await open();
        if (next.res.status === 200) again = next;
        else {
          await next.res.text();
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(again?.res.status).toBe(200);
      again?.close();
    } finally {
      a.close();
      b.close();
    }
  });
});
