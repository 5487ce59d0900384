import { generateKeyringEntry } from '@mango/platform-secrets';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * `Idempotency-Key` on POST (openapi.yaml, docs/api-guide.md "Idempotent requests"): a repeat of a
 * request with the same key replays the first response and writes nothing; the key row commits in the
 * same transaction as the write it protects. A raw HTTP client repeats its request as a client does whose
 * connection dropped before it read the answer.
 */
describe('Idempotency-Key (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let envId: string;
  let agentId: string;

  /** A fresh Workspace with its own key, so that counts are this test's alone. */
  async function workspace(): Promise<{ id: string; ws: HttpClient }> {
    const id = await api.createWorkspace();
    const ws = httpClient(api.url, (await api.issueKey(id)).api_key);
    return { id, ws };
  }

  const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });
  const message = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });
  const count = async (sql: string, params: unknown[]) =>
    Number((await api.sql<{ n: string }>(sql, params))[0]!.n);

  beforeAll(async () => {
    // A keyring: webhook endpoints (a once-shown signing secret) can be created.
    api = await startApi('idempotency', { MANGO_KEYRING: generateKeyringEntry('idem-1') });
  });
  afterAll(() => api.close());

  async function setUp(ws: HttpClient) {
    agentId = (await ws.post('/v1/agents', { name: 'a', model: 'claude-sonnet-4-6' })).body.id;
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  }

  it('sessions.create repeated with one key creates one Session and replays the first response (status, body, request-id)', async () => {
    const { id, ws } = await workspace();
    await setUp(ws);
    const body = { agent: agentId, environment_id: envId, title: 't' };
    const first = await ws.post('/v1/sessions', body, keyed('create-1'));
    const again = await ws.post('/v1/sessions', body, keyed('create-1'));
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('request-id')).toBe(first.headers.get('request-id'));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('SELECT count(*) AS n FROM sessions WHERE workspace_id = $1', [id])).toBe(1);
  });

  it('events.send repeated with one key appends one user.message (one turn asked for)', async () => {
    const { ws } = await workspace();
    await setUp(ws);
    const s = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    const send = { events: [message('hello')] };
    const first = await ws.post(`/v1/sessions/${s.id}/events`, send, keyed('send-1'));
    const again = await ws.post(`/v1/sessions/${s.id}/events`, send, keyed('send-1'));
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const q = `SELECT count(*) AS n FROM session_events WHERE session_id = $1 AND type = 'user.message'`;
    expect(await count(q, [s.id])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM outbox WHERE session_id = $1', [s.id])).toBe(1);
  });

  it('agents.create repeated with one key leaves one Agent', async () => {
    const { id, ws } = await workspace();
    const body = { name: 'once', model: 'claude-sonnet-4-6' };
    const first = await ws.post('/v1/agents', body, keyed('agent-1'));
    const again = await ws.post('/v1/agents', body, keyed('agent-1'));
    expect(again.body.id).toBe(first.body.id);
    expect(await count('SELECT count(*) AS n FROM agents WHERE workspace_id = $1', [id])).toBe(1);
  });

  it('the same key with another body or another path is 409 invalid_request_error naming the reuse, and writes nothing', async () => {
    const { id, ws } = await workspace();
    await ws.post('/v1/agents', { name: 'x', model: 'claude-sonnet-4-6' }, keyed('reused'));
    const otherBody = await ws.post('/v1/agents', { name: 'y', model: 'claude-sonnet-4-6' }, keyed('reused'));
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.error.type).toBe('invalid_request_error');
    expect(otherBody.body.error.message).toMatch(/Idempotency-Key .*different request/);
    expect(otherBody.body.error.details).toEqual({ error_code: 'idempotency_key_reused' });
    const otherPath = await ws.post('/v1/environments', { name: 'e' }, keyed('reused'));
    expect(otherPath.status).toBe(409);
    expect(await count('SELECT count(*) AS n FROM agents WHERE workspace_id = $1', [id])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM environments WHERE workspace_id = $1', [id])).toBe(0);
  });

  it('16 concurrent requests with one key make one write: the others replay it or are told it is in progress (409, retry-after)', async () => {
    const { id, ws } = await workspace();
    await setUp(ws);
    const body = { agent: agentId, environment_id: envId };
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => ws.post('/v1/sessions', body, keyed('burst'))),
    );
    expect(await count('SELECT count(*) AS n FROM sessions WHERE workspace_id = $1', [id])).toBe(1);
    const created = answers.filter((a) => a.status === 201);
    const busy = answers.filter((a) => a.status === 409);
    expect(created.length + busy.length).toBe(16);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    for (const b of busy) {
      expect(b.body.error.details).toEqual({ error_code: 'idempotency_in_progress' });
      expect(b.headers.get('retry-after')).toBe('1');
    }
    // Sent again once the first finished, each of them replays the one Session.
    const later = await ws.post('/v1/sessions', body, keyed('burst'));
    expect(later.body.id).toBe(created[0]!.body.id);
    expect(await count('SELECT count(*) AS n FROM sessions WHERE workspace_id = $1', [id])).toBe(1);
    console.log(`16 concurrent sessions.create with one key: ${created.length} × 201, ${busy.length} × 409`);
  });

  it('keys are scoped to the Workspace: the same key in two Workspaces makes one write in each', async () => {
    const a = await workspace();
    const b = await workspace();
    const body = { name: 'scoped', model: 'claude-sonnet-4-6' };
    const ra = await a.ws.post('/v1/agents', body, keyed('shared-key'));
    const rb = await b.ws.post('/v1/agents', body, keyed('shared-key'));
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(rb.body.id).not.toBe(ra.body.id);
  });

  it('a request that failed is not remembered: the same key runs again once the input is fixed', async () => {
    const { id, ws } = await workspace();
    const bad = await ws.post('/v1/agents', { name: 'late' }, keyed('after-error'));
    expect(bad.status).toBe(400);
    const fixed = await ws.post('/v1/agents', { name: 'late', model: 'm' }, keyed('after-error'));
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('SELECT count(*) AS n FROM agents WHERE workspace_id = $1', [id])).toBe(1);
  });

  it('a malformed key (empty, over 255 characters, not visible ASCII) is 400 and writes nothing', async () => {
    const { id, ws } = await workspace();
    for (const key of ['', 'k'.repeat(256), 'with space', 'clé']) {
      const r = await ws.post('/v1/agents', { name: 'k', model: 'm' }, keyed(key));
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/Idempotency-Key/);
    }
    expect(await count('SELECT count(*) AS n FROM agents WHERE workspace_id = $1', [id])).toBe(0);
  });

  it('Work create is keyed; the lease transitions (Ack) are idempotent by protocol and ignore the key (no key row)', async () => {
    const { id, ws } = await workspace();
    const env = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const sup = httpClient(api.url, (await api.issueKey(id, env)).api_key);
    const base = `/v1/environments/${env}/work`;
    const first = await ws.post(base, { data: { type: 'healthcheck' } }, keyed('work-1'));
    const again = await ws.post(base, { data: { type: 'healthcheck' } }, keyed('work-1'));
    expect(again.body.id).toBe(first.body.id);
    expect(await count('SELECT count(*) AS n FROM work_items WHERE environment_id = $1', [env])).toBe(1);
    expect((await sup.get(`${base}/poll`)).body.id).toBe(first.body.id);
    const acks = [
      await sup.post(`${base}/${first.body.id}/ack`, undefined, keyed('ack-1')),
      await sup.post(`${base}/${first.body.id}/ack`, undefined, keyed('ack-1')),
    ];
    expect(acks.map((a) => [a.status, a.body.state, a.headers.get('idempotent-replayed')])).toEqual([
      [200, 'starting', null],
      [200, 'starting', null],
    ]);
    const rows = `SELECT count(*) AS n FROM idempotency_keys WHERE workspace_id = $1 AND credential_kind = 'environment'`;
    expect(await count(rows, [id])).toBe(0);
  });

  it('without a key a repeated sessions.create makes two Sessions (why SDKs send one)', async () => {
    const { id, ws } = await workspace();
    await setUp(ws);
    const body = { agent: agentId, environment_id: envId };
    await ws.post('/v1/sessions', body);
    await ws.post('/v1/sessions', body);
    const n = await count('SELECT count(*) AS n FROM sessions WHERE workspace_id = $1', [id]);
    console.log(`sessions.create sent twice without Idempotency-Key: ${n} Sessions`);
    expect(n).toBe(2);
  });

  it('a once-shown secret (webhook create and rotate_secret) is replayed to a retry but kept sealed, never in clear', async () => {
    const { id, ws } = await workspace();
    const body = { url: 'https://hooks.example.com/mango', event_types: ['session.status_idled'] };
    const first = await ws.post('/v1/webhooks', body, keyed('hook-1'));
    expect(first.status).toBe(201);
    const secret = first.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const again = await ws.post('/v1/webhooks', body, keyed('hook-1'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const rotated = await ws.post(`/v1/webhooks/${first.body.id}/rotate_secret`, {}, keyed('rotate-1'));
    expect(rotated.status).toBe(200);
    const rotatedAgain = await ws.post(`/v1/webhooks/${first.body.id}/rotate_secret`, {}, keyed('rotate-1'));
    expect(rotatedAgain.body).toEqual(rotated.body);
    expect(await count('SELECT count(*) AS n FROM webhooks WHERE workspace_id = $1', [id])).toBe(1);
    // Neither secret is in the kept responses; they are sealed.
    const kept = await api.sql<{ response_body: unknown }>(
      'SELECT response_body FROM idempotency_keys WHERE workspace_id = $1',
      [id],
    );
    expect(kept).toHaveLength(2);
    const stored = JSON.stringify(kept);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(JSON.stringify(rotated.body).slice(1, 40));
    for (const s of [secret, ...JSON.stringify(rotated.body).match(/whsec_[A-Za-z0-9+/=_-]+/g)!])
      expect(stored).not.toContain(s);
    expect(stored).toContain('mango_sealed_response');
  });
});
