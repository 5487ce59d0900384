import { httpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Credential × endpoint matrix for Sessions, events, streams and Threads (decisions, "credentials"):
 * the Workspace key does everything; an Environment key nothing; the Session's live Work token reads
 * its Session, its events and its stream and posts only tool results; another Session's token sees
 * nothing (404); a Stopped token is 401 everywhere; another Workspace's key gets 404. Every cell asserts
 * the exact status.
 */
describe('Session credential matrix (real apps/api process)', () => {
  let api: ApiUnderTest;
  const creds: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await startApi('sesscreds');
    creds.workspace = (await api.issueKey('wrkspc_default')).api_key;
    const http = httpClient(api.url, creds.workspace);
    const agent = (await http.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await http.post('/v1/environments', { name: 'e' })).body.id;
    creds.environment = (await api.issueKey('wrkspc_default', env)).api_key;
    creds.otherWorkspace = (await api.issueKey(await api.createWorkspace())).api_key;
    const supervisor = httpClient(api.url, creds.environment);
    const say = { type: 'user.message', content: [{ type: 'text', text: 'hi' }] };
    // Three Sessions, each with a claimed Work item: ours, another, and one whose Work was stopped.
    const claim = async () => {
      const s = (await http.post('/v1/sessions', { agent, environment_id: env, initial_events: [say] })).body
        .id;
      const w = await supervisor.get(`/v1/environments/${env}/work/poll?block_ms=5000`);
      expect(w.body.data).toEqual({ type: 'session', id: s });
      await supervisor.post(`/v1/environments/${env}/work/${w.body.id}/ack`);
      const token = JSON.parse(Buffer.from(w.body.secret, 'base64url').toString()).sessions_token as string;
      await httpClient(api.url, token).post(
        `/v1/environments/${env}/work/${w.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
      );
      return { session: s, work: w.body.id as string, token };
    };
    const own = await claim();
    const other = await claim();
    const stopped = await claim();
    await http.post(`/v1/environments/${env}/work/${stopped.work}/stop`, { force: true });
    ids.session = own.session;
    ids.thread = 'sthr_' + own.session.slice('sesn_'.length);
    creds.work = own.token;
    creds.otherWork = other.token;
    creds.stoppedWork = stopped.token;
  }, 60_000);
  afterAll(() => api.close());

  type Route = [string, string, (i: Record<string, string>) => string, () => unknown];
  let n = 0;
  const routes: Route[] = [
    ['POST', 'sessions.create', () => '/v1/sessions', () => ({ agent: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ' })],
    ['GET', 'sessions.list', () => '/v1/sessions', () => undefined],
    ['GET', 'sessions.retrieve', (i) => `/v1/sessions/${i.session}`, () => undefined],
    ['POST', 'sessions.update', (i) => `/v1/sessions/${i.session}`, () => ({ title: `t${n++}` })],
    [
      'POST',
      'sessions.events.send(message)',
      (i) => `/v1/sessions/${i.session}/events`,
      () => ({ events: [{ type: 'user.message', content: [{ type: 'text', text: `m${n++}` }] }] }),
    ],
    [
      'POST',
      'sessions.events.send(custom_tool_result)',
      (i) => `/v1/sessions/${i.session}/events`,
      // A call id that is not one of this Session's: past authorization it is a 400.
      () => ({
        events: [
          {
            type: 'user.custom_tool_result',
            custom_tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0ZZ',
            content: [{ type: 'text', text: 'r' }],
          },
        ],
      }),
    ],
    ['GET', 'sessions.events.list', (i) => `/v1/sessions/${i.session}/events`, () => undefined],
    ['GET', 'sessions.threads.list', (i) => `/v1/sessions/${i.session}/threads`, () => undefined],
    [
      'GET',
      'sessions.threads.retrieve',
      (i) => `/v1/sessions/${i.session}/threads/${i.thread}`,
      () => undefined,
    ],
    [
      'GET',
      'sessions.threads.events',
      (i) => `/v1/sessions/${i.session}/threads/${i.thread}/events`,
      () => undefined,
    ],
  ];
  // Expected status per credential and route; 'ok' = 200/201 (create with a missing agent is 400: past auth).
  const OK = 'ok';
  const expected: Record<string, Record<string, number | typeof OK>> = {
    workspace: {
      'sessions.create': 400,
      'sessions.list': OK,
      'sessions.retrieve': OK,
      'sessions.update': OK,
      'sessions.events.send(message)': OK,
      'sessions.events.send(custom_tool_result)': 400,
      'sessions.events.list': OK,
      'sessions.threads.list': OK,
      'sessions.threads.retrieve': OK,
      'sessions.threads.events': OK,
    },
    environment: Object.fromEntries(routes.map(([, op]) => [op, 403])),
    work: {
      'sessions.create': 403,
      'sessions.list': 403,
      'sessions.retrieve': OK,
      'sessions.update': 403,
      'sessions.events.send(message)': 403,
      // The Work token's right for operator custom tools: past authorization (the call is not this Session's).
      'sessions.events.send(custom_tool_result)': 400,
      'sessions.events.list': OK,
      'sessions.threads.list': 403,
      'sessions.threads.retrieve': 403,
      'sessions.threads.events': 403,
    },
    otherWork: {
      'sessions.create': 403,
      'sessions.list': 403,
      'sessions.retrieve': 404,
      'sessions.update': 403,
      'sessions.events.send(message)': 403,
      'sessions.events.send(custom_tool_result)': 404,
      'sessions.events.list': 404,
      'sessions.threads.list': 403,
      'sessions.threads.retrieve': 403,
      'sessions.threads.events': 403,
    },
    stoppedWork: Object.fromEntries(routes.map(([, op]) => [op, 401])),
    otherWorkspace: {
      'sessions.create': 400,
      'sessions.list': OK,
      'sessions.retrieve': 404,
      'sessions.update': 404,
      'sessions.events.send(message)': 404,
      'sessions.events.send(custom_tool_result)': 404,
      'sessions.events.list': 404,
      'sessions.threads.list': 404,
      'sessions.threads.retrieve': 404,
      'sessions.threads.events': 404,
    },
  };

  const cells = Object.entries(expected).flatMap(([cred]) =>
    routes.map((r): [string, string, Route] => [cred, r[1], r]),
  );
  it.each(cells)('%s → %s', async (cred, op, [method, , path, body]) => {
    const res = await httpClient(api.url, creds[cred]).request(method, path(ids), body(), {
      contract: false,
    });
    const want = expected[cred]![op]!;
    if (want === OK) expect([200, 201]).toContain(res.status);
    else expect(res.status).toBe(want);
  });

  it.each([
    ['workspace', 200],
    ['work', 200],
    ['otherWork', 404],
    ['stoppedWork', 401],
    ['environment', 403],
    ['otherWorkspace', 404],
  ])('%s on the event stream → %s', async (cred, status) => {
    const res = await fetch(`${api.url}/v1/sessions/${ids.session}/events/stream`, {
      headers: { authorization: `Bearer ${creds[cred]}` },
    });
    expect(res.status).toBe(status);
    await res.body?.cancel();
  });

  it('the Work token posts tool and custom tool results only (other client events are 403), and never a second Session', async () => {
    const worker = httpClient(api.url, creds.work);
    for (const e of [
      { type: 'user.interrupt' },
      { type: 'user.tool_confirmation', tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0ZZ', result: 'allow' },
    ]) {
      const res = await worker.post(
        `/v1/sessions/${ids.session}/events`,
        { events: [e] },
        { contract: false },
      );
      expect(res.status).toBe(403);
    }
  });
});
