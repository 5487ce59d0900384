import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/** The Environment Work flow (docs/api-guide.md, Environment Work), over HTTP against a real API and PostgreSQL. */
describe('Environment Work protocol (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  let sup: HttpClient;

  beforeAll(async () => {
    api = await startApi('work');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  });
  afterAll(() => api.close());
  // Each test gets its own Environment (its own queue) and supervisor key.
  let n = 0;
  beforeEach(async () => {
    envId = (await ws.post('/v1/environments', { name: `pool-${n++}` })).body.id;
    sup = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
  });

  const base = () => `/v1/environments/${envId}/work`;

  async function claimed() {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    expect(created.status).toBe(201);
    const polled = await sup.get(`${base()}/poll?worker_id=w1`);
    expect(polled.status).toBe(200);
    expect(polled.body.id).toBe(created.body.id);
    const secret = decodeWorkSecret(polled.body.secret);
    return {
      id: created.body.id as string,
      token: secret.sessions_token,
      secret,
      worker: httpClient(api.url, secret.sessions_token),
    };
  }

  it('healthcheck: create → poll → ack → heartbeats → result → stopped with a durable result; no Session is created', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    expect(created.body).toMatchObject({
      data: { type: 'healthcheck' },
      state: 'queued',
      result: null,
      secret: null,
    });
    expect(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)).toBe(120_000);

    const polled = await sup.get(`${base()}/poll`);
    expect(polled.body).toMatchObject({ id: created.body.id, state: 'queued' });
    const secret = decodeWorkSecret(polled.body.secret);
    expect(secret.sessions_token).toMatch(/^mango_wt_/);
    expect(secret.api_base_url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const worker = httpClient(api.url, secret.sessions_token);
    const w = (id: string) => `${base()}/${id}`;

    // The token is unusable before Ack.
    expect(
      (await worker.post(`${w(created.body.id)}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`)).status,
    ).toBe(401);

    const acked = await sup.post(`${w(created.body.id)}/ack`);
    expect(acked.body).toMatchObject({ state: 'starting', secret: null });
    expect((await sup.post(`${w(created.body.id)}/ack`)).body.state).toBe('starting');

    const hb1 = await worker.post(
      `${w(created.body.id)}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT&desired_ttl_seconds=30`,
    );
    expect(hb1.body).toMatchObject({
      type: 'work_heartbeat',
      state: 'active',
      lease_extended: true,
      ttl_seconds: 30,
    });
    const hb2 = await worker.post(
      `${w(created.body.id)}/heartbeat?expected_last_heartbeat=${encodeURIComponent(hb1.body.last_heartbeat)}`,
    );
    expect(hb2.status).toBe(200);
    const stale = await worker.post(
      `${w(created.body.id)}/heartbeat?expected_last_heartbeat=${encodeURIComponent(hb1.body.last_heartbeat)}`,
    );
    expect(stale.status).toBe(412);
    expect(stale.body.error.type).toBe('heartbeat_precondition_failed');
    expect(stale.body.error.details.current_state).toMatchObject({
      state: 'active',
      last_heartbeat: hb2.body.last_heartbeat,
    });

    const result = await worker.post(`${w(created.body.id)}/result`, {
      status: 'succeeded',
      message: 'Sandbox process and workspace check passed',
    });
    expect(result.body).toMatchObject({ state: 'stopped', result: { status: 'succeeded' }, secret: null });
    // Identical retry (a lost success response) is accepted; a conflicting one is 409.
    expect(
      (
        await worker.post(`${w(created.body.id)}/result`, {
          status: 'succeeded',
          message: 'Sandbox process and workspace check passed',
        })
      ).status,
    ).toBe(200);
    expect(
      (await worker.post(`${w(created.body.id)}/result`, { status: 'failed', message: 'no' })).status,
    ).toBe(409);
    // In the terminal window the token authorizes only the Result retry.
    expect(
      (
        await worker.post(
          `${w(created.body.id)}/heartbeat?expected_last_heartbeat=${encodeURIComponent(hb2.body.last_heartbeat)}`,
        )
      ).status,
    ).toBe(401);
    expect((await worker.post(`${w(created.body.id)}/stop`, {})).status).toBe(401);

    const got = await ws.get(w(created.body.id));
    expect(got.body).toMatchObject({
      state: 'stopped',
      result: { status: 'succeeded', message: 'Sandbox process and workspace check passed' },
      secret: null,
    });
    expect(
      (await ws.get(base())).body.data.find((x: { id: string }) => x.id === created.body.id).result.status,
    ).toBe('succeeded');
    // No synthetic Session, event or outbox row is created for a healthcheck.
    const rows = await api.sql<{ n: number }>(
      'SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM session_events) + (SELECT count(*) FROM outbox) AS n',
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('empty poll is {} and stats count depth, pending, oldest and pollers', async () => {
    const empty = await sup.get(`${base()}/poll`);
    expect(empty.body).toEqual({});
    await ws.post(base(), { data: { type: 'healthcheck' } });
    const s1 = await sup.get(`${base()}/stats`);
    expect(s1.body).toMatchObject({ type: 'work_queue_stats', depth: 1, pending: 0 });
    expect(s1.body.oldest_queued_at).not.toBeNull();
    await sup.get(`${base()}/poll?worker_id=w2`);
    await sup.get(`${base()}/poll?worker_id=w3`);
    await sup.get(`${base()}/poll`, { headers: { 'anthropic-worker-id': 'w4' } });
    const s2 = await ws.get(`${base()}/stats`);
    expect(s2.body).toMatchObject({ depth: 0, pending: 1, workers_polling: 3 });
  });

  it('a stale unacked claim is reclaimed under the same id with a rotated token', async () => {
    const first = await claimed();
    const again = await sup.get(`${base()}/poll?reclaim_older_than_ms=0`);
    expect(again.body.id).toBe(first.id);
    const second = decodeWorkSecret(again.body.secret);
    expect(second.sessions_token).not.toBe(first.token);
    await sup.post(`${base()}/${first.id}/ack`);
    expect(
      (await first.worker.post(`${base()}/${first.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`))
        .status,
    ).toBe(401);
    expect(
      (
        await httpClient(api.url, second.sessions_token).post(
          `${base()}/${first.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
        )
      ).status,
    ).toBe(200);
  });

  it('Stop: graceful → stopping (the next heartbeat tells the worker), forced → stopped; healthcheck → cancelled; 204', async () => {
    const c = await claimed();
    await sup.post(`${base()}/${c.id}/ack`);
    const hb = await c.worker.post(`${base()}/${c.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`);
    const graceful = await ws.post(`${base()}/${c.id}/stop`, {});
    expect(graceful.status).toBe(204);
    expect(graceful.body).toBeUndefined();
    const told = await c.worker.post(
      `${base()}/${c.id}/heartbeat?expected_last_heartbeat=${encodeURIComponent(hb.body.last_heartbeat)}`,
    );
    expect(told.body).toMatchObject({ state: 'stopping', lease_extended: false });
    expect(
      (await c.worker.post(`${base()}/${c.id}/result`, { status: 'succeeded', message: 'late' })).status,
    ).toBe(409);
    expect((await c.worker.post(`${base()}/${c.id}/stop`, { force: true })).status).toBe(204);
    const got = await ws.get(`${base()}/${c.id}`);
    expect(got.body).toMatchObject({ state: 'stopped', result: { status: 'cancelled' } });
    expect((await ws.post(`${base()}/${c.id}/stop`, { force: true })).status).toBe(204);
  });

  it('metadata updates patch and the secret is redacted everywhere but Poll', async () => {
    const c = await claimed();
    const up = await ws.post(`${base()}/${c.id}`, { metadata: { run: '1' } });
    expect(up.body).toMatchObject({ metadata: { run: '1' }, secret: null });
    const rows = await api.sql('SELECT token_digest FROM work_items WHERE id = $1', [c.id]);
    expect(Buffer.from(rows[0].token_digest).toString('utf8')).not.toContain(c.token);
    expect(api.app.logs()).not.toContain(c.token);
  });
});
