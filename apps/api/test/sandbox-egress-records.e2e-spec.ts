import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Sandbox egress records over HTTP (ADR 0021): the supervisor reports with its Environment key for a
 * Session Work item of its Environment; a Workspace key reads them per Session, paged oldest first.
 * Every bad input is a 4xx in the envelope that stores nothing.
 */
describe('Sandbox egress records (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let sup: HttpClient;
  let otherSup: HttpClient;
  let envId: string;
  let sessionId: string;
  const workId = 'work_01JD2Y3QX9V5M8K7R6T4W2P0EG';
  const checkId = 'work_01JD2Y3QX9V5M8K7R6T4W2P0HC';

  const allowed = {
    kind: 'connect',
    host: 'github.com',
    port: 443,
    allowed: true,
    bytes_out: 517,
    bytes_in: 4096,
  };
  const refused = {
    kind: 'http',
    host: 'cp.test',
    port: 8080,
    allowed: false,
    rule: 'control_plane',
    bytes_out: 0,
    bytes_in: 0,
  };
  const count = async () =>
    Number((await api.sql<{ n: string }>('SELECT count(*) AS n FROM sandbox_egress_records'))[0]!.n);

  beforeAll(async () => {
    api = await startApi('egressrec');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'e' })).body.id;
    const otherEnv = (await ws.post('/v1/environments', { name: 'other' })).body.id;
    sup = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    otherSup = httpClient(api.url, (await api.issueKey('wrkspc_default', otherEnv)).api_key);
    const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    sessionId = (await ws.post('/v1/sessions', { agent, environment_id: envId })).body.id;
    await api.sql(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       VALUES ($1, 'wrkspc_default', $2, 'session', $3, 'stopped', '{}', now())`,
      [workId, envId, sessionId],
    );
    await api.sql(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, state, metadata, created_at, expires_at)
       VALUES ($1, 'wrkspc_default', $2, 'healthcheck', 'stopped', '{}', now(), now())`,
      [checkId, envId],
    );
  });
  afterAll(() => api.close());

  const report = (client: HttpClient, body: unknown, work = workId, env = envId) =>
    client.post(`/v1/environments/${env}/work/${work}/egress_records`, body);

  it('stores a report for the Session of the Work item and lists it, oldest first, paged', async () => {
    const first = await report(sup, { records: [allowed, refused] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ type: 'sandbox_egress_report', recorded: 2 });
    expect((await report(sup, { records: [{ ...allowed, host: 'pypi.org', failure: 'idle' }] })).status).toBe(
      200,
    );

    const page1 = await ws.get(`/v1/sessions/${sessionId}/egress_records?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.data).toEqual([
      {
        type: 'sandbox_egress_record',
        id: expect.any(String),
        work_id: workId,
        ...allowed,
        rule: null,
        failure: null,
        created_at: expect.any(String),
      },
      expect.objectContaining({ host: 'cp.test', allowed: false, rule: 'control_plane', failure: null }),
    ]);
    const page2 = await ws.get(
      `/v1/sessions/${sessionId}/egress_records?limit=2&page=${page1.body.next_page}`,
    );
    expect(page2.body).toEqual({
      data: [expect.objectContaining({ host: 'pypi.org', failure: 'idle' })],
      next_page: null,
    });
  });

  it.each<[string, () => Promise<{ status: number; body: any }>, number, string, RegExp]>([
    [
      'a Workspace key reporting',
      () => report(ws, { records: [allowed] }),
      403,
      'permission_error',
      /may not perform/,
    ],
    [
      "another Environment's key",
      () => report(otherSup, { records: [allowed] }),
      403,
      'permission_error',
      /another Environment/,
    ],
    [
      'a healthcheck item',
      () => report(sup, { records: [allowed] }, checkId),
      404,
      'not_found_error',
      /work/,
    ],
    [
      'an unknown item',
      () => report(sup, { records: [allowed] }, 'work_01JD2Y3QX9V5M8K7R6T4W2P0ZZ'),
      404,
      'not_found_error',
      /work/,
    ],
    ['no records field', () => report(sup, {}), 400, 'invalid_request_error', /records must be an array/],
    [
      'an unknown field',
      () => report(sup, { records: [{ ...allowed, secret: 'x' }] }),
      400,
      'invalid_request_error',
      /records\[0\]\.secret: unknown field/,
    ],
    [
      'a refused record without its rule',
      () => report(sup, { records: [{ ...refused, rule: undefined }] }),
      400,
      'invalid_request_error',
      /records\[0\]\.rule is required/,
    ],
    [
      'an allowed record with a rule',
      () => report(sup, { records: [{ ...allowed, rule: 'no_egress' }] }),
      400,
      'invalid_request_error',
      /only for a refused/,
    ],
    [
      'an unknown rule',
      () => report(sup, { records: [{ ...refused, rule: 'nope' }] }),
      400,
      'invalid_request_error',
      /rule must be one of/,
    ],
    [
      'a negative byte count',
      () => report(sup, { records: [{ ...allowed, bytes_in: -1 }] }),
      400,
      'invalid_request_error',
      /bytes_in must be at least 0/,
    ],
    [
      '101 records',
      () => report(sup, { records: Array.from({ length: 101 }, () => allowed) }),
      400,
      'invalid_request_error',
      /at most 100/,
    ],
    [
      'an Environment key reading',
      () => sup.get(`/v1/sessions/${sessionId}/egress_records`),
      403,
      'permission_error',
      /./,
    ],
    [
      'an unknown Session',
      () => ws.get('/v1/sessions/sesn_01JD2Y3QX9V5M8K7R6T4W2P0ZZ/egress_records'),
      404,
      'not_found_error',
      /session/,
    ],
    [
      'a bad cursor',
      () => ws.get(`/v1/sessions/${sessionId}/egress_records?page=bm9wZQ`),
      400,
      'invalid_request_error',
      /page/,
    ],
    [
      'an unknown query',
      () => ws.get(`/v1/sessions/${sessionId}/egress_records?order=desc`),
      400,
      'invalid_request_error',
      /order/,
    ],
  ])('refuses %s and stores nothing', async (_label, call, status, type, message) => {
    const before = await count();
    const res = await call();
    expect(res.status).toBe(status);
    expect(res.body.error.type).toBe(type);
    expect(res.body.error.message).toMatch(message);
    expect(await count()).toBe(before);
  });
});
