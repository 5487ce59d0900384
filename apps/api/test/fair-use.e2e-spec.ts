import { ApiUnderTest, freePort, httpClient, HttpClient, scrapeMetrics, startApi } from '@mango/testing';

/**
 * Fair use (docs/api-guide.md "Fair use"): limits per credential and per Workspace on one real API
 * process — request rates (token buckets), open event streams, and Sessions with a turn under way
 * (counted in PostgreSQL). One Workspace at its limits is refused with 429 `rate_limit_error` and
 * `retry-after`; another Workspace is still served. The rates are set so low (one token per 1,000 s)
 * that the counts do not depend on how fast the machine is.
 */
const msg = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

function expectRefused(res: { status: number; body: any; headers: Headers }, limit: string, scope: string) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({
    type: 'error',
    error: { type: 'rate_limit_error', details: { limit, scope } },
  });
  expect(res.body.request_id).toMatch(/^req_/);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('fair use: request rates per key and per Workspace (real API process)', () => {
  let api: ApiUnderTest;
  let metricsUrl: string;
  let workspaceB: string;

  beforeAll(async () => {
    const metricsPort = await freePort();
    api = await startApi('fairuse_rates', {
      MANGO_RATE_LIMIT_KEY_RPS: '0.001',
      MANGO_RATE_LIMIT_KEY_BURST: '5',
      MANGO_RATE_LIMIT_WORKSPACE_RPS: '0.001',
      MANGO_RATE_LIMIT_WORKSPACE_BURST: '8',
      MANGO_METRICS_PORT: String(metricsPort),
    });
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    workspaceB = await api.createWorkspace();
  }, 120_000);

  afterAll(async () => {
    await api?.close();
  });

  it('Workspace A exhausts its key and Workspace rates and is refused; Workspace B is still served', async () => {
    const a1 = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const a2 = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const b = httpClient(api.url, (await api.issueKey(workspaceB)).api_key);
    const burst = async (c: HttpClient, n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await c.get('/v1/agents'));
      return out;
    };

    // Key a1: its own burst of 5, then refused by its key's bucket (the Workspace's is not spent).
    const first = await burst(a1, 10);
    expect(first.map((r) => r.status)).toEqual([...Array(5).fill(200), ...Array(5).fill(429)]);
    for (const r of first.slice(5)) expectRefused(r, 'requests', 'credential');

    // Key a2 of the same Workspace: the Workspace's burst of 8 has 3 left, then the Workspace refuses.
    const second = await burst(a2, 10);
    expect(second.map((r) => r.status)).toEqual([...Array(3).fill(200), ...Array(7).fill(429)]);
    for (const r of second.slice(3)) expectRefused(r, 'requests', 'workspace');
    expect(second[3]!.body.error.message).toMatch(/workspace wrkspc_default is over its request rate/);

    // Workspace B is not starved: its key gets its whole burst.
    const other = await burst(b, 5);
    expect(other.map((r) => r.status)).toEqual(Array(5).fill(200));

    // A request without a credential is 401 as before (not counted, not 429).
    expect((await fetch(`${api.url}/v1/agents`)).status).toBe(401);

    const scrape = await scrapeMetrics(metricsUrl);
    expect(scrape.value('mango_fair_use_refusals_total', { limit: 'requests', scope: 'credential' })).toBe(5);
    expect(scrape.value('mango_fair_use_refusals_total', { limit: 'requests', scope: 'workspace' })).toBe(7);
  });
});

describe('fair use: event streams and running Sessions per Workspace (real API process)', () => {
  let api: ApiUnderTest;
  let workspaceB: string;
  const clients: Record<'a' | 'a2' | 'b', { key: string; http: HttpClient }> = {} as never;
  const fixtures: Record<'a' | 'b', { agent: string; env: string }> = {} as never;

  beforeAll(async () => {
    api = await startApi('fairuse_streams', {
      MANGO_MAX_SSE_STREAMS: '10',
      MANGO_MAX_SSE_STREAMS_PER_WORKSPACE: '2',
      MANGO_MAX_SSE_STREAMS_PER_KEY: '2',
      MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE: '1',
    });
    workspaceB = await api.createWorkspace();
    for (const [name, ws] of [
      ['a', 'wrkspc_default'],
      ['a2', 'wrkspc_default'],
      ['b', workspaceB],
    ] as const) {
      const key = (await api.issueKey(ws)).api_key;
      clients[name] = { key, http: httpClient(api.url, key) };
    }
    for (const name of ['a', 'b'] as const) {
      const http = clients[name].http;
      fixtures[name] = {
        agent: (await http.post('/v1/agents', { name: 'fair', model: 'claude-sonnet-4-6' })).body.id,
        env: (await http.post('/v1/environments', { name: 'fair' })).body.id,
      };
    }
  }, 120_000);

  afterAll(async () => {
    await api?.close();
  });

  const openStream = async (key: string, session: string) => {
    const controller = new AbortController();
    const res = await fetch(`${api.url}/v1/sessions/${session}/events/stream`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    return { res, close: () => controller.abort() };
  };

  it('Workspace A holds its 2 streams and a third (from another key) is 429; Workspace B still opens its own', async () => {
    const sa = (
      await clients.a.http.post('/v1/sessions', { agent: fixtures.a.agent, environment_id: fixtures.a.env })
    ).body.id;
    const sb = (
      await clients.b.http.post('/v1/sessions', { agent: fixtures.b.agent, environment_id: fixtures.b.env })
    ).body.id;
    const open: Array<{ close: () => void }> = [];
    try {
      const a1 = await openStream(clients.a.key, sa);
      const a2 = await openStream(clients.a.key, sa);
      open.push(a1, a2);
      expect([a1.res.status, a2.res.status]).toEqual([200, 200]);
      // The same key: its own limit (2) is reached.
      expectRefused(await clients.a.http.get(`/v1/sessions/${sa}/events/stream`), 'streams', 'credential');
      // Another key of Workspace A: the Workspace's limit (2) is reached.
      const viaA2 = await clients.a2.http.get(`/v1/sessions/${sa}/events/stream`);
      expectRefused(viaA2, 'streams', 'workspace');
      expect(viaA2.body.error.message).toMatch(/already holds 2 event streams/);
      // The primary Thread's stream counts against the same slots.
      const threads = (await clients.a2.http.get(`/v1/sessions/${sa}/threads`)).body.data as Array<{
        id: string;
      }>;
      expectRefused(
        await clients.a2.http.get(`/v1/sessions/${sa}/threads/${threads[0]!.id}/stream`),
        'streams',
        'workspace',
      );

      // Workspace B is not starved: both of its streams open (the process allows 10).
      const b1 = await openStream(clients.b.key, sb);
      const b2 = await openStream(clients.b.key, sb);
      open.push(b1, b2);
      expect([b1.res.status, b2.res.status]).toEqual([200, 200]);

      // A closed stream frees its Workspace's slot (once the server has seen the connection close).
      a1.close();
      let again: Awaited<ReturnType<typeof openStream>> | undefined;
      for (let i = 0; i < 50 && !again; i++) {
        const next = await openStream(clients.a2.key, sa);
        if (next.res.status === 200) again = next;
        else {
          expect(next.res.status).toBe(429);
          await next.res.text();
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(again?.res.status).toBe(200);
      if (again) open.push(again);
    } finally {
      for (const s of open) s.close();
    }
  });

  it('Workspace A at 1 running Session: a turn start is 429 and stores nothing; idle creation and Workspace B are served', async () => {
    const a = clients.a.http;
    const count = async (sql: string, params: unknown[] = []) => Number((await api.sql(sql, params))[0].n);
    const started = await a.post('/v1/sessions', {
      agent: fixtures.a.agent,
      environment_id: fixtures.a.env,
      initial_events: [msg('first')],
    });
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('running');

    // A second turn start in A at create: refused, no Session row.
    const sessionsBefore = await count(
      `SELECT count(*) AS n FROM sessions WHERE workspace_id = 'wrkspc_default'`,
    );
    const refusedCreate = await a.post('/v1/sessions', {
      agent: fixtures.a.agent,
      environment_id: fixtures.a.env,
      initial_events: [msg('second')],
    });
    expectRefused(refusedCreate, 'running_sessions', 'workspace');
    expect(refusedCreate.body.error.message).toMatch(/already has 1 sessions running/);
    expect(await count(`SELECT count(*) AS n FROM sessions WHERE workspace_id = 'wrkspc_default'`)).toBe(
      sessionsBefore,
    );

    // An idle Session is not a turn: created. Its first message would start one: refused, nothing stored.
    const idle = await a.post('/v1/sessions', { agent: fixtures.a.agent, environment_id: fixtures.a.env });
    expect(idle.status).toBe(201);
    const eventsOf = (id: string) =>
      count('SELECT count(*) AS n FROM session_events WHERE session_id = $1', [id]);
    const eventsBefore = await eventsOf(idle.body.id);
    expectRefused(
      await a.post(`/v1/sessions/${idle.body.id}/events`, { events: [msg('go')] }),
      'running_sessions',
      'workspace',
    );
    expect(await eventsOf(idle.body.id)).toBe(eventsBefore);
    expect((await a.get(`/v1/sessions/${idle.body.id}`)).body.status).toBe('idle');
    // Input to the Session already running joins its turn: accepted.
    expect((await a.post(`/v1/sessions/${started.body.id}/events`, { events: [msg('more')] })).status).toBe(
      200,
    );

    // A Deployment run in A records the hosted run error for a rate limit.
    const deployment = (
      await a.post('/v1/deployments', {
        name: 'fair',
        agent: fixtures.a.agent,
        environment_id: fixtures.a.env,
        initial_events: [msg('scheduled work')],
      })
    ).body;
    const run = await a.post(`/v1/deployments/${deployment.id}/run`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'session_rate_limited_error' } });

    // Workspace B is not starved by A's running Session.
    const inB = await clients.b.http.post('/v1/sessions', {
      agent: fixtures.b.agent,
      environment_id: fixtures.b.env,
      initial_events: [msg('hello')],
    });
    expect(inB.status).toBe(201);
    expect(inB.body.status).toBe('running');

    // Once A's turn is over (no orchestrator runs here: the turn's end is written as the workflow would
    // leave it), A starts a turn again.
    await api.sql(`UPDATE sessions SET status = 'idle' WHERE id = $1`, [started.body.id]);
    expect((await a.post(`/v1/sessions/${idle.body.id}/events`, { events: [msg('go')] })).status).toBe(200);
    expect((await a.get(`/v1/sessions/${idle.body.id}`)).body.status).toBe('running');
  });

  it('turn starts sent at once in one Workspace take the last place once: 1 of 30 concurrent creates runs, 29 are 429', async () => {
    const workspace = await api.createWorkspace();
    const http = httpClient(api.url, (await api.issueKey(workspace)).api_key);
    const agent = (await http.post('/v1/agents', { name: 'race', model: 'claude-sonnet-4-6' })).body.id;
    const env = (await http.post('/v1/environments', { name: 'race' })).body.id;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        http.post('/v1/sessions', { agent, environment_id: env, initial_events: [msg(`race ${i}`)] }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(29).fill(429)]);
    const rows = await api.sql<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM sessions WHERE workspace_id = $1 GROUP BY status',
      [workspace],
    );
    expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([['running', 1]]);
  });
});
