import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/** Bad input on the Work routes: the documented status and envelope, and the stored state unchanged. */
describe('Work bad input (real apps/api process)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let sup: HttpClient;
  let worker: HttpClient;
  let sessionWorker: HttpClient;
  let envId: string;
  let checkId: string;
  let sessionWorkId: string;

  beforeAll(async () => {
    api = await startApi('workbad');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'e' })).body.id;
    sup = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    checkId = (await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } })).body.id;
    const polled = await sup.get(`/v1/environments/${envId}/work/poll`);
    await sup.post(`/v1/environments/${envId}/work/${checkId}/ack`);
    worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${envId}/work/${checkId}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    sessionWorkId = 'work_01JD2Y3QX9V5M8K7R6T4W2P0AB';
    await api.sql(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       VALUES ($1, 'wrkspc_default', $2, 'session', 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'queued', '{}', now())`,
      [sessionWorkId, envId],
    );
    const sp = await sup.get(`/v1/environments/${envId}/work/poll`);
    await sup.post(`/v1/environments/${envId}/work/${sessionWorkId}/ack`);
    sessionWorker = httpClient(api.url, decodeWorkSecret(sp.body.secret).sessions_token);
    await sessionWorker.post(
      `/v1/environments/${envId}/work/${sessionWorkId}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
  });
  afterAll(() => api.close());

  /** `CHECK` and `SESSION` stand for the two items made in beforeAll (the cases are built before they exist). */
  const w = (id: string) =>
    `/v1/environments/${envId}/work/${id === 'CHECK' ? checkId : id === 'SESSION' ? sessionWorkId : id}`;
  const snapshot = () => api.sql('SELECT * FROM work_items ORDER BY id');

  const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string, RegExp]> = [
    [
      'an unknown Work id',
      () => ws.get(w('work_01JD2Y3QX9V5M8K7R6T4W2P0ZZ')),
      404,
      'not_found_error',
      /not found/,
    ],
    [
      'a wrong Work id prefix',
      () => ws.get(w('sesn_01JD2Y3QX9V5M8K7R6T4W2P0ZZ')),
      404,
      'not_found_error',
      /not found/,
    ],
    [
      'a wrong Environment id prefix',
      () => ws.get('/v1/environments/agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ/work'),
      404,
      'not_found_error',
      /not found/,
    ],
    [
      'a malformed expected_last_heartbeat',
      () => worker.post(`${w('CHECK')}/heartbeat?expected_last_heartbeat=yesterday`),
      400,
      'invalid_request_error',
      /expected_last_heartbeat/,
    ],
    [
      'a missing expected_last_heartbeat',
      () => worker.post(`${w('CHECK')}/heartbeat`),
      400,
      'invalid_request_error',
      /expected_last_heartbeat is required/,
    ],
    [
      'a TTL of 0',
      () => worker.post(`${w('CHECK')}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT&desired_ttl_seconds=0`),
      400,
      'invalid_request_error',
      /desired_ttl_seconds/,
    ],
    [
      'a TTL of 301',
      () =>
        worker.post(`${w('CHECK')}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT&desired_ttl_seconds=301`),
      400,
      'invalid_request_error',
      /desired_ttl_seconds/,
    ],
    [
      'Result on Session Work',
      () => sessionWorker.post(`${w('SESSION')}/result`, { status: 'succeeded', message: 'x' }),
      400,
      'invalid_request_error',
      /only for healthcheck/,
    ],
    [
      'a worker-reported timed_out',
      () => worker.post(`${w('CHECK')}/result`, { status: 'timed_out', message: 'x' }),
      400,
      'invalid_request_error',
      /status must be/,
    ],
    [
      'an oversize Result message',
      () => worker.post(`${w('CHECK')}/result`, { status: 'failed', message: 'x'.repeat(1025) }),
      400,
      'invalid_request_error',
      /1024/,
    ],
    [
      'an oversize Fail message',
      () => sessionWorker.post(`${w('SESSION')}/fail`, { message: 'x'.repeat(1025) }),
      400,
      'invalid_request_error',
      /1024/,
    ],
    [
      'an unknown data type',
      () => ws.post(`/v1/environments/${envId}/work`, { data: { type: 'batch' } }),
      400,
      'invalid_request_error',
      /healthcheck/,
    ],
    [
      'creating Session Work directly',
      () => ws.post(`/v1/environments/${envId}/work`, { data: { type: 'session', id: 'sesn_x' } }),
      400,
      'invalid_request_error',
      /Session input/,
    ],
    [
      'block_ms over 30000',
      () => sup.get(`/v1/environments/${envId}/work/poll?block_ms=30001`),
      400,
      'invalid_request_error',
      /block_ms/,
    ],
    [
      'a non-boolean force',
      () => ws.post(`${w('CHECK')}/stop`, { force: 'yes' }),
      400,
      'invalid_request_error',
      /force/,
    ],
    [
      'an update without metadata',
      () => ws.post(w('CHECK'), {}),
      400,
      'invalid_request_error',
      /metadata is required/,
    ],
    [
      '17 metadata keys',
      () =>
        ws.post(w('CHECK'), {
          metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
        }),
      400,
      'invalid_request_error',
      /16/,
    ],
    [
      'an unknown query parameter',
      () => sup.get(`/v1/environments/${envId}/work/poll?wait=1`),
      400,
      'invalid_request_error',
      /unknown query/,
    ],
  ];

  it.each(cases)('%s', async (_label, send, status, type, message) => {
    const before = await snapshot();
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.body.error.type).toBe(type);
    expect(res.body.error.message).toMatch(message);
    expect(await snapshot()).toEqual(before);
  });
});
