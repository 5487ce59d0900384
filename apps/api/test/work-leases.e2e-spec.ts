import { Client } from 'pg';
import { ApiKeysService } from '@mango/feature-auth';
import { decodeWorkSecret } from '@mango/feature-work';
import { createDataSource } from '@mango/persistence';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/** Lease expiry, reclaim, deadlines, long polls and key revocation — docs/api-guide.md, Environment Work. */
describe('Work leases (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  let envKey: { id: string; api_key: string };
  let sup: HttpClient;
  let n = 0;

  beforeAll(async () => {
    api = await startApi('leases');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  });
  afterAll(() => api.close());
  beforeEach(async () => {
    envId = (await ws.post('/v1/environments', { name: `pool-${n++}` })).body.id;
    envKey = await api.issueKey('wrkspc_default', envId);
    sup = httpClient(api.url, envKey.api_key);
  });

  const base = () => `/v1/environments/${envId}/work`;
  const hbPath = (id: string, last: string, ttl?: number) =>
    `${base()}/${id}/heartbeat?expected_last_heartbeat=${encodeURIComponent(last)}${ttl ? `&desired_ttl_seconds=${ttl}` : ''}`;

  async function active(ttl = 60) {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    const polled = await sup.get(`${base()}/poll`);
    const token = decodeWorkSecret(polled.body.secret).sessions_token;
    await sup.post(`${base()}/${created.body.id}/ack`);
    const worker = httpClient(api.url, token);
    const hb = await worker.post(hbPath(created.body.id, 'NO_HEARTBEAT', ttl));
    expect(hb.status).toBe(200);
    return { id: created.body.id as string, token, worker, last: hb.body.last_heartbeat as string };
  }

  it('a lost active lease is reclaimed under the same id; the old token can never heartbeat, fail, stop or complete the successor', async () => {
    const old = await active(1);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await old.worker.post(hbPath(old.id, old.last));
    expect(expired.status).toBe(412);
    expect(expired.body.error.details.current_state.state).toBe('active');

    const re = await sup.get(`${base()}/poll`);
    expect(re.body).toMatchObject({ id: old.id, state: 'queued' });
    const fresh = decodeWorkSecret(re.body.secret).sessions_token;
    expect(fresh).not.toBe(old.token);
    await sup.post(`${base()}/${old.id}/ack`);
    const successor = httpClient(api.url, fresh);
    const hb = await successor.post(hbPath(old.id, 'NO_HEARTBEAT'));
    expect(hb.status).toBe(200);

    for (const [method, path, body] of [
      ['POST', hbPath(old.id, hb.body.last_heartbeat), undefined],
      ['POST', `${base()}/${old.id}/result`, { status: 'failed', message: 'stale' }],
      ['POST', `${base()}/${old.id}/fail`, { message: 'stale' }],
      ['POST', `${base()}/${old.id}/stop`, { force: true }],
    ] as const) {
      const res = await old.worker.request(method, path, body);
      expect(res.status).toBe(401);
      expect(res.body.error.type).toBe('authentication_error');
    }
    const done = await successor.post(`${base()}/${old.id}/result`, { status: 'succeeded', message: 'ok' });
    expect(done.body.result).toEqual({ status: 'succeeded', message: 'ok' });
  });

  it('launch failure before the first heartbeat: the starting lease runs out and the item is reclaimable before its deadline', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    await sup.get(`${base()}/poll`);
    await sup.post(`${base()}/${created.body.id}/ack`);
    expect((await sup.get(`${base()}/poll`)).body).toEqual({});
    await api.sql("UPDATE work_items SET lease_expires_at = now() - interval '1 millisecond' WHERE id = $1", [
      created.body.id,
    ]);
    const re = await sup.get(`${base()}/poll`);
    expect(re.body.id).toBe(created.body.id);
  });

  it('deadline expiry: an overdue check becomes stopped/timed_out on Get, List, Stats and Poll, and a late Result is refused', async () => {
    const a = await active();
    await api.sql("UPDATE work_items SET expires_at = now() - interval '1 millisecond' WHERE id = $1", [
      a.id,
    ]);
    const late = await a.worker.post(`${base()}/${a.id}/result`, {
      status: 'succeeded',
      message: 'too late',
    });
    expect(late.status).toBe(401);
    const got = await ws.get(`${base()}/${a.id}`);
    expect(got.body).toMatchObject({ state: 'stopped', result: { status: 'timed_out' } });

    const b = await ws.post(base(), { data: { type: 'healthcheck' } });
    await api.sql("UPDATE work_items SET expires_at = now() - interval '1 millisecond' WHERE id = $1", [
      b.body.id,
    ]);
    expect((await sup.get(`${base()}/poll`)).body).toEqual({});
    const stored = await api.sql('SELECT state, result FROM work_items WHERE id = $1', [b.body.id]);
    expect(stored[0]).toMatchObject({ state: 'stopped', result: { status: 'timed_out' } });
  });

  it('a Result committed just before the deadline is never rewritten by reconciliation', async () => {
    const a = await active();
    await a.worker.post(`${base()}/${a.id}/result`, { status: 'failed', message: 'disk full' });
    await api.sql("UPDATE work_items SET expires_at = now() - interval '1 millisecond' WHERE id = $1", [
      a.id,
    ]);
    expect((await ws.get(`${base()}/${a.id}`)).body.result).toEqual({
      status: 'failed',
      message: 'disk full',
    });
  });

  it('Stop of a queued check cancels it; a cancelled sandbox cannot later report success', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    expect((await ws.post(`${base()}/${created.body.id}/stop`)).status).toBe(204);
    expect((await ws.get(`${base()}/${created.body.id}`)).body).toMatchObject({
      state: 'stopped',
      result: { status: 'cancelled' },
    });
    expect((await sup.get(`${base()}/poll`)).body).toEqual({});
    const a = await active();
    await ws.post(`${base()}/${a.id}/stop`, { force: true });
    expect(
      (await a.worker.post(`${base()}/${a.id}/result`, { status: 'succeeded', message: 'x' })).status,
    ).toBe(401);
    expect((await ws.get(`${base()}/${a.id}`)).body.result.status).toBe('cancelled');
  });

  it('a long poll is woken by NOTIFY when Work is created', async () => {
    const pending = sup.get(`${base()}/poll?block_ms=20000`);
    await new Promise((r) => setTimeout(r, 300));
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    const started = Date.now();
    const polled = await pending;
    expect(polled.body.id).toBe(created.body.id);
    // Returned on the wake-up, far from the 20 s block (a loose bound: this is not a timing test).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a long poll whose probe skipped a row another transaction held looks again, not after block_ms', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    // A concurrent transaction holds the queued row (as a reconciling read can), so Poll's SKIP LOCKED
    // probe skips it; once that transaction ends, the waiting poll must claim it.
    const holder = new Client({ connectionString: api.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE', [created.body.id]);
      const pending = sup.get(`${base()}/poll?block_ms=20000`);
      await new Promise((r) => setTimeout(r, 300));
      await holder.query('COMMIT');
      const started = Date.now();
      const polled = await pending;
      expect(polled.body.id).toBe(created.body.id);
      expect(Date.now() - started).toBeLessThan(10_000); // loose: far from the 20 s block
    } finally {
      await holder.end();
    }
  });

  it('a long poll also wakes when a stale claim becomes reclaimable, and returns {} after block_ms otherwise', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    await sup.get(`${base()}/poll`);
    const re = await sup.get(`${base()}/poll?block_ms=15000&reclaim_older_than_ms=500`);
    expect(re.body.id).toBe(created.body.id);
    const t = Date.now();
    expect((await sup.get(`${base()}/poll?block_ms=300`)).body).toEqual({});
    expect(Date.now() - t).toBeGreaterThanOrEqual(250);
  });

  it('revocation: waits for a transaction holding the key, then the old key cannot claim or Ack; acked Work keeps its lease', async () => {
    const a = await active();
    const queued = await ws.post(base(), { data: { type: 'healthcheck' } });
    const claimedByOld = await sup.get(`${base()}/poll`);
    expect(claimedByOld.body.id).toBe(queued.body.id);

    // A transaction that holds the key exactly as Poll/Ack do makes the revocation wait for it.
    const holder = new Client({ connectionString: api.db.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR SHARE', [envKey.id]);
    const ds = await createDataSource({ url: api.db.url, poolSize: 1 }).initialize();
    let revoked = false;
    const revoking = new ApiKeysService(ds).revoke(envKey.id).then(() => (revoked = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(revoked).toBe(false);
    await holder.query('COMMIT');
    await revoking;
    expect(revoked).toBe(true);
    await holder.end();
    await ds.destroy();

    expect((await sup.get(`${base()}/poll`)).status).toBe(401);
    expect((await sup.post(`${base()}/${queued.body.id}/ack`)).status).toBe(401);
    // Already-acked Work finishes under its existing lease.
    expect((await a.worker.post(hbPath(a.id, a.last))).status).toBe(200);
    // A replacement key can Ack the pending claim in the same Environment.
    const replacement = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    expect((await replacement.post(`${base()}/${queued.body.id}/ack`)).body.state).toBe('starting');
  });

  it('a key revoked right after use is refused at once by Poll, Ack and stats, though its principal is remembered', async () => {
    const created = await ws.post(base(), { data: { type: 'healthcheck' } });
    const polled = await sup.get(`${base()}/poll`); // the guard now remembers this key's principal
    expect(polled.body.id).toBe(created.body.id);
    await api.revokeKey(envKey.id);
    for (const res of [
      await sup.get(`${base()}/poll`),
      await sup.post(`${base()}/${created.body.id}/ack`),
      await sup.get(`${base()}/stats`),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error.type).toBe('authentication_error');
    }
    // The refused Ack changed nothing.
    const [row] = await api.sql('SELECT state, acknowledged_at FROM work_items WHERE id = $1', [
      created.body.id,
    ]);
    expect(row).toEqual({ state: 'queued', acknowledged_at: null });
  });

  it('a revoked key is refused on the next empty long-poll retry', async () => {
    const polling = sup.get(`${base()}/poll?block_ms=10000`);
    await new Promise((r) => setTimeout(r, 300));
    await api.revokeKey(envKey.id);
    await ws.post(base(), { data: { type: 'healthcheck' } }); // wakes the poll, whose retry re-checks the key
    const res = await polling;
    expect(res.status).toBe(401);
  });

  it('Fail on Session Work stops it with the token of a live lease', async () => {
    const sessionWork = `work_01JD2Y3QX9V5M8K7R6T4W2P0A${n}`.slice(0, 31);
    await api.sql(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       VALUES ($1, 'wrkspc_default', $2, 'session', 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'queued', '{}', now())`,
      [sessionWork, envId],
    );
    const polled = await sup.get(`${base()}/poll`);
    expect(polled.body.data).toEqual({ type: 'session', id: 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB' });
    await sup.post(`${base()}/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    expect(
      (await worker.post(`${base()}/${polled.body.id}/result`, { status: 'succeeded', message: 'x' })).status,
    ).toBe(400);
    const failed = await worker.post(`${base()}/${polled.body.id}/fail`, {
      message: 'the pinned Skill archive is corrupt',
    });
    expect(failed.body.state).toBe('stopped');
    expect((await worker.post(`${base()}/${polled.body.id}/fail`, { message: 'again' })).status).toBe(401);
  });
});
