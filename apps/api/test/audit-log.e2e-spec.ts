import { generateKeyringEntry } from '@mango/platform-secrets';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * The audit log (docs/api-guide.md, "Audit log"): every write through the API, whatever its outcome, is
 * one append-only row (who, what, when, request id, outcome), readable by the Workspace's own keys only,
 * never holding a secret; rows older than the retention are pruned.
 */
describe('audit log (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;

  beforeAll(async () => {
    // Pruning every second with a one-day retention, so the retention case sees the pruner work.
    api = await startApi('audit', {
      MANGO_AUDIT_PRUNE_SECONDS: '1',
      MANGO_AUDIT_RETENTION_DAYS: '1',
      MANGO_KEYRING: generateKeyringEntry('audit-1'),
    });
  });
  afterAll(() => api.close());

  async function workspace(): Promise<{ id: string; ws: HttpClient; keyId: string }> {
    const id = await api.createWorkspace();
    const key = await api.issueKey(id);
    return { id, ws: httpClient(api.url, key.api_key), keyId: key.id };
  }

  /** Rows are written once each response has finished: read until `n` are there. */
  async function entries(ws: HttpClient, n: number, query = ''): Promise<any[]> {
    for (let i = 0; ; i++) {
      const r = await ws.get(`/v1/audit_log?limit=100${query}`);
      expect(r.status).toBe(200);
      if (r.body.data.length >= n || i === 200) return r.body.data;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('records each write (a create, an update, a refused write, a delete) and no read, with who, what and the outcome', async () => {
    const { ws, keyId } = await workspace();
    const created = await ws.post('/v1/agents', { name: 'a', model: 'claude-sonnet-4-6' });
    expect(created.status).toBe(201);
    const agentId = created.body.id as string;
    const updated = await ws.post(`/v1/agents/${agentId}`, { version: created.body.version, name: 'b' });
    expect(updated.status).toBe(200);
    const refused = await ws.post('/v1/agents', { name: 'no model' });
    expect(refused.status).toBe(400);
    await ws.get(`/v1/agents/${agentId}`);
    await ws.get('/v1/agents');
    const archived = await ws.post(`/v1/agents/${agentId}/archive`, {});
    expect(archived.status).toBe(200);

    const rows = await entries(ws, 4);
    expect(rows).toHaveLength(4);
    // Newest first.
    expect(rows.map((r) => [r.operation, r.resource_id, r.status_code, r.outcome])).toEqual([
      ['POST /v1/agents/{agent_id}/archive', agentId, 200, 'succeeded'],
      ['POST /v1/agents', null, 400, 'failed'],
      ['POST /v1/agents/{agent_id}', agentId, 200, 'succeeded'],
      ['POST /v1/agents', agentId, 201, 'succeeded'],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({
        type: 'audit_entry',
        actor: { type: 'workspace_key', id: keyId, label: 'test' },
      });
      expect(r.id).toMatch(/^audit_/);
      expect(Date.parse(r.created_at)).not.toBeNaN();
    }
    expect(rows.map((r) => r.request_id)).toEqual([
      archived.headers.get('request-id'),
      refused.headers.get('request-id'),
      updated.headers.get('request-id'),
      created.headers.get('request-id'),
    ]);
  });

  it('filters by resource, operation, outcome and time, and pages with next_page', async () => {
    const { ws } = await workspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await ws.post('/v1/agents', { name: `a${i}`, model: 'claude-sonnet-4-6' })).body.id);
    await ws.post('/v1/agents', {});
    const all = await entries(ws, 6);
    expect(all).toHaveLength(6);

    expect(
      (await ws.get(`/v1/audit_log?resource_id=${ids[2]}`)).body.data.map((r: any) => r.resource_id),
    ).toEqual([ids[2]]);
    expect((await ws.get('/v1/audit_log?outcome=failed')).body.data).toHaveLength(1);
    const op = encodeURIComponent('POST /v1/agents');
    expect((await ws.get(`/v1/audit_log?operation=${op}&outcome=succeeded`)).body.data).toHaveLength(5);
    const future = encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString());
    expect((await ws.get(`/v1/audit_log?created_at[gte]=${future}`)).body.data).toEqual([]);

    const seen: string[] = [];
    let page: string | null = '';
    while (page !== null) {
      const r: any = await ws.get(`/v1/audit_log?limit=4${page ? `&page=${page}` : ''}`);
      seen.push(...r.body.data.map((e: any) => e.id));
      page = r.body.next_page;
    }
    expect(seen).toEqual(all.map((r) => r.id));
  });

  it('refuses bad filters with a 400 and changes nothing', async () => {
    const { ws } = await workspace();
    for (const q of [
      'outcome=maybe',
      'unknown=1',
      'limit=0',
      'page=nope',
      'created_at[gte]=yesterday',
      'actor_id=',
    ]) {
      const r = await ws.get(`/v1/audit_log?${q}`);
      expect([q, r.status, r.body.error?.type]).toEqual([q, 400, 'invalid_request_error']);
    }
    expect(await entries(ws, 0)).toEqual([]);
  });

  it("is the Workspace's own: another Workspace sees none of it, an Environment key may not read it", async () => {
    const a = await workspace();
    const b = await workspace();
    await a.ws.post('/v1/agents', { name: 'a', model: 'claude-sonnet-4-6' });
    expect(await entries(a.ws, 1)).toHaveLength(1);
    expect((await b.ws.get('/v1/audit_log')).body.data).toEqual([]);
    const envId = (await a.ws.post('/v1/environments', { name: 'pool' })).body.id;
    const envKey = httpClient(api.url, (await api.issueKey(a.id, envId)).api_key);
    const r = await envKey.get('/v1/audit_log');
    expect(r.status).toBe(403);
    expect(r.body.error.type).toBe('permission_error');
  });

  it('holds no secret: a Vault credential created with a token leaves only ids in the log', async () => {
    const { id, ws } = await workspace();
    const token = `audit-canary-${Date.now()}-secret`;
    const vault = (await ws.post('/v1/vaults', { display_name: 'v' })).body;
    const cred = await ws.post(`/v1/vaults/${vault.id}/credentials`, {
      display_name: 'c',
      auth: { type: 'static_bearer', token, mcp_server_url: 'https://mcp.example.com/mcp' },
    });
    expect(cred.status).toBe(201);
    const rows = await entries(ws, 2);
    expect(rows.map((r) => [r.operation, r.resource_id])).toEqual([
      ['POST /v1/vaults/{vault_id}/credentials', cred.body.id],
      ['POST /v1/vaults', vault.id],
    ]);
    const stored = await api.sql('SELECT * FROM audit_log WHERE workspace_id = $1', [id]);
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('is append-only: UPDATE and TRUNCATE are refused by the database', async () => {
    const { id, ws } = await workspace();
    await ws.post('/v1/agents', { name: 'a', model: 'claude-sonnet-4-6' });
    await entries(ws, 1);
    await expect(
      api.sql("UPDATE audit_log SET outcome = 'failed' WHERE workspace_id = $1", [id]),
    ).rejects.toThrow(/audit_log is append-only \(UPDATE\)/);
    await expect(api.sql('TRUNCATE audit_log')).rejects.toThrow(/audit_log is append-only \(TRUNCATE\)/);
    expect((await entries(ws, 1))[0].outcome).toBe('succeeded');
  });

  it('prunes rows older than the retention and keeps the rest', async () => {
    const { id, ws, keyId } = await workspace();
    await ws.post('/v1/agents', { name: 'kept', model: 'claude-sonnet-4-6' });
    await entries(ws, 1);
    await api.sql(
      `INSERT INTO audit_log (id, workspace_id, created_at, actor_kind, actor_id, operation, request_id, status_code, outcome)
       VALUES ('audit_01J0000000000000000000OLD0', $1, now() - interval '2 days', 'workspace_key', $2, 'POST /v1/agents', 'req_old', 201, 'succeeded')`,
      [id, keyId],
    );
    for (let i = 0; i < 400; i++) {
      const rows = await api.sql<{ id: string }>('SELECT id FROM audit_log WHERE workspace_id = $1', [id]);
      if (rows.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const left = await entries(ws, 1);
    expect(left).toHaveLength(1);
    expect(left[0].operation).toBe('POST /v1/agents');
    expect(left[0].id).not.toBe('audit_01J0000000000000000000OLD0');
  });
});
