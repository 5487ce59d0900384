import { newId } from '@mango/platform-ids';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

const msg = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });
const BUDGET = { type: 'limit', max_list_cost: { amount: '500', currency: 'USD' } };

describe('Deployments over HTTP (real apps/api process, PostgreSQL and Temporal Schedules)', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  let agentId: string;
  let envId: string;
  let storeId: string;

  beforeAll(async () => {
    api = await startApi('deployments', {
      MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
      MANGO_TASK_QUEUE: `deployments-api-${Date.now()}`,
    });
    http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    agentId = (await http.post('/v1/agents', { name: 'reporter', model: 'claude-sonnet-4-6' })).body.id;
    await http.post(`/v1/agents/${agentId}`, { description: 'v2' });
    envId = (await http.post('/v1/environments', { name: 'pool' })).body.id;
    // A Memory Store template (apps/files owns the HTTP API for stores; the row is all a Deployment reads).
    storeId = newId('memoryStore');
    await api.sql(
      `INSERT INTO memory_stores (id, workspace_id, name, description, metadata, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', 'Team notes', '', '{}', now(), now())`,
      [storeId],
    );
  }, 60_000);
  afterAll(() => api.close());

  const base = () => ({
    name: 'nightly report',
    agent: agentId,
    environment_id: envId,
    initial_events: [msg('Write the report')],
  });

  it('creates a scheduled Deployment pinned to the current version, with upcoming runs from Temporal', async () => {
    const res = await http.post('/v1/deployments', {
      ...base(),
      description: 'every day',
      schedule: { type: 'cron', expression: '0 9 * * *', timezone: 'Europe/Berlin' },
      resources: [
        { type: 'memory_store', memory_store_id: storeId, access: 'read_only', instructions: 'notes' },
      ],
      budget: BUDGET,
      metadata: { team: 'a' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'deployment',
      agent: { type: 'agent', id: agentId, version: 2 },
      status: 'active',
      paused_reason: null,
      vault_ids: [],
      resources: [
        { type: 'memory_store', memory_store_id: storeId, access: 'read_only', instructions: 'notes' },
      ],
      schedule: { type: 'cron', expression: '0 9 * * *', timezone: 'Europe/Berlin', last_run_at: null },
      budget: BUDGET,
    });
    const upcoming: string[] = res.body.schedule.upcoming_runs_at;
    expect(upcoming).toHaveLength(5);
    // 09:00 in Berlin is 08:00Z in winter, plus at most 9 minutes of jitter (15% of a day, capped).
    for (const t of upcoming) {
      const d = new Date(t);
      expect(d.getUTCHours()).toBe(8);
      expect(d.getUTCMinutes()).toBeLessThan(9);
    }
    const paused = await http.post(`/v1/deployments/${res.body.id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', paused_reason: { type: 'manual' } });
    expect(paused.body.schedule.upcoming_runs_at).toEqual([]);
    const again = await http.post(`/v1/deployments/${res.body.id}/unpause`);
    expect(again.body).toMatchObject({ status: 'active', paused_reason: null });
    expect(again.body.schedule.upcoming_runs_at).toHaveLength(5);
    // Manual-only after `schedule: null`.
    const manual = await http.post(`/v1/deployments/${res.body.id}`, { schedule: null, name: 'renamed' });
    expect(manual.body).toMatchObject({ schedule: null, name: 'renamed' });
    const archived = await http.post(`/v1/deployments/${res.body.id}/archive`);
    expect(archived.body.archived_at).not.toBeNull();
    expect((await http.post(`/v1/deployments/${res.body.id}/run`)).status).toBe(409);
    expect((await http.post(`/v1/deployments/${res.body.id}`, { name: 'x' })).status).toBe(409);
    expect((await http.get('/v1/deployments')).body.data.map((d: { id: string }) => d.id)).not.toContain(
      res.body.id,
    );
    expect(
      (await http.get('/v1/deployments?include_archived=true')).body.data.map((d: { id: string }) => d.id),
    ).toContain(res.body.id);
  });

  it('a manual run creates a Session with deployment_id, the budget and the Memory Store template', async () => {
    const d = (
      await http.post('/v1/deployments', {
        ...base(),
        resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_only' }],
        budget: BUDGET,
      })
    ).body;
    const run = await http.post(`/v1/deployments/${d.id}/run`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({
      type: 'deployment_run',
      deployment_id: d.id,
      agent: { type: 'agent', id: agentId, version: 2 },
      error: null,
      trigger_context: { type: 'manual' },
    });
    const session = (await http.get(`/v1/sessions/${run.body.session_id}`)).body;
    expect(session).toMatchObject({
      deployment_id: d.id,
      budget: BUDGET,
      status: 'running',
      agent: { id: agentId, version: 2 },
      resources: [
        { type: 'memory_store', memory_store_id: storeId, access: 'read_only', name: 'Team notes' },
      ],
    });
    const events = (await http.get(`/v1/sessions/${session.id}/events`)).body.data;
    expect(events[0]).toMatchObject(msg('Write the report'));
    // Session list filter and run list filters.
    expect(
      (await http.get(`/v1/sessions?deployment_id=${d.id}`)).body.data.map((s: { id: string }) => s.id),
    ).toEqual([session.id]);
    const other = (await http.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    expect(other.deployment_id).toBeNull();
    expect((await http.get(`/v1/deployment_runs?deployment_id=${d.id}`)).body.data).toEqual([run.body]);
    expect((await http.get(`/v1/deployment_runs?deployment_id=${d.id}&has_error=true`)).body.data).toEqual(
      [],
    );
    expect(
      (await http.get(`/v1/deployment_runs?deployment_id=${d.id}&trigger_type=schedule`)).body.data,
    ).toEqual([]);
    expect((await http.get(`/v1/deployment_runs/${run.body.id}`)).body).toEqual(run.body);
    const unknown = newId('deployment');
    expect((await http.get(`/v1/deployment_runs?deployment_id=${unknown}`)).body.data).toEqual([]);
  });

  it('archiving the Agent auto-pauses its Deployments with agent_archived_error; a manual run then records the error', async () => {
    const agent = (await http.post('/v1/agents', { name: 'temp', model: 'claude-sonnet-4-6' })).body.id;
    const d = (await http.post('/v1/deployments', { ...base(), agent })).body;
    await http.post(`/v1/agents/${agent}/archive`);
    const after = (await http.get(`/v1/deployments/${d.id}`)).body;
    expect(after).toMatchObject({
      status: 'paused',
      paused_reason: { type: 'error', error: { type: 'agent_archived_error' } },
    });
    const run = await http.post(`/v1/deployments/${d.id}/run`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'agent_archived_error' } });
    expect(
      (await http.get(`/v1/deployment_runs?deployment_id=${d.id}&has_error=true`)).body.data,
    ).toHaveLength(1);
    expect((await api.sql('SELECT id FROM sessions WHERE deployment_id = $1', [d.id])).length).toBe(0);
  });

  it('a run auto-pauses when the Environment or Memory Store template is archived or gone', async () => {
    const env2 = (await http.post('/v1/environments', { name: 'doomed' })).body.id;
    const d1 = (await http.post('/v1/deployments', { ...base(), environment_id: env2 })).body;
    await http.post(`/v1/environments/${env2}/archive`);
    expect((await http.post(`/v1/deployments/${d1.id}/run`)).body.error.type).toBe(
      'environment_archived_error',
    );
    expect((await http.get(`/v1/deployments/${d1.id}`)).body.paused_reason).toEqual({
      type: 'error',
      error: { type: 'environment_archived_error' },
    });
    const store2 = newId('memoryStore');
    await api.sql(
      `INSERT INTO memory_stores (id, workspace_id, name, description, metadata, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', 'Tmp', '', '{}', now(), now())`,
      [store2],
    );
    const d2 = (
      await http.post('/v1/deployments', {
        ...base(),
        resources: [{ type: 'memory_store', memory_store_id: store2 }],
      })
    ).body;
    await api.sql('UPDATE memory_stores SET archived_at = now() WHERE id = $1', [store2]);
    expect((await http.post(`/v1/deployments/${d2.id}/run`)).body.error.type).toBe(
      'memory_store_archived_error',
    );
    await api.sql('DELETE FROM memory_stores WHERE id = $1', [store2]);
    await http.post(`/v1/deployments/${d2.id}/unpause`);
    expect((await http.post(`/v1/deployments/${d2.id}/run`)).body.error.type).toBe(
      'session_resource_not_found_error',
    );
    expect((await http.get(`/v1/deployments/${d2.id}`)).body.status).toBe('paused');
  });

  it("vault_ids: checked when written, attached to every run's Session, and an archived or deleted Vault auto-pauses", async () => {
    const vault = (await http.post('/v1/vaults', { display_name: 'deploy creds' })).body.id;
    const other = (await http.post('/v1/vaults', { display_name: 'other' })).body.id;
    const missing = newId('vault');
    const refused = await http.post('/v1/deployments', { ...base(), vault_ids: [missing] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(`vault ${missing} not found`);
    expect((await http.post('/v1/deployments', { ...base(), vault_ids: [vault, vault] })).status).toBe(400);
    const d = await http.post('/v1/deployments', { ...base(), vault_ids: [vault] });
    expect(d.status).toBe(201);
    expect(d.body.vault_ids).toEqual([vault]);
    const updated = await http.post(`/v1/deployments/${d.body.id}`, { vault_ids: [other, vault] });
    expect(updated.body.vault_ids).toEqual([other, vault]);
    // Leaving vault_ids out of an update keeps them.
    expect((await http.post(`/v1/deployments/${d.body.id}`, { name: 'renamed' })).body.vault_ids).toEqual([
      other,
      vault,
    ]);
    const run = (await http.post(`/v1/deployments/${d.body.id}/run`)).body;
    expect(run.error).toBeNull();
    expect((await http.get(`/v1/sessions/${run.session_id}`)).body.vault_ids).toEqual([other, vault]);

    await http.post(`/v1/vaults/${other}/archive`);
    const archivedRun = (await http.post(`/v1/deployments/${d.body.id}/run`)).body;
    expect(archivedRun).toMatchObject({ session_id: null, error: { type: 'vault_archived_error' } });
    expect((await http.get(`/v1/deployments/${d.body.id}`)).body).toMatchObject({
      status: 'paused',
      paused_reason: { type: 'error', error: { type: 'vault_archived_error' } },
    });
    expect((await http.post(`/v1/deployments/${d.body.id}`, { vault_ids: [other] })).status).toBe(400);

    await http.post(`/v1/deployments/${d.body.id}`, { vault_ids: [vault] });
    await http.post(`/v1/deployments/${d.body.id}/unpause`);
    expect((await http.delete(`/v1/vaults/${vault}`)).status).toBe(200);
    expect((await http.post(`/v1/deployments/${d.body.id}/run`)).body.error.type).toBe(
      'vault_not_found_error',
    );
  });

  it('lists with filters and pages', async () => {
    const a = (await http.post('/v1/deployments', base())).body;
    const b = (await http.post('/v1/deployments', base())).body;
    await http.post(`/v1/deployments/${a.id}/pause`);
    const page1 = await http.get(`/v1/deployments?limit=1&agent_id=${agentId}`);
    expect(page1.body.data[0].id).toBe(b.id);
    const page2 = await http.get(`/v1/deployments?limit=1&agent_id=${agentId}&page=${page1.body.next_page}`);
    expect(page2.body.data[0].id).toBe(a.id);
    const paused = (await http.get('/v1/deployments?status=paused')).body.data.map(
      (d: { id: string }) => d.id,
    );
    expect(paused).toContain(a.id);
    expect(paused).not.toContain(b.id);
    expect((await http.get('/v1/deployments?status=paused&include_archived=true')).status).toBe(400);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no name', { name: undefined }, /name is required/],
    ['no initial_events', { initial_events: undefined }, /initial_events is required/],
    ['zero initial_events', { initial_events: [] }, /at least 1/],
    ['51 initial_events', { initial_events: Array(51).fill(msg('x')) }, /at most 50/],
    [
      'a system.message',
      { initial_events: [{ type: 'system.message', content: [{ type: 'text', text: 'x' }] }] },
      /not supported by Mango/,
    ],
    [
      'an unknown agent',
      { agent: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB' },
      /agent agent_01JD2Y3QX9V5M8K7R6T4W2P0AB not found/,
    ],
    ['a missing agent version', { agent: { type: 'agent', id: 'AGENT', version: 9 } }, /has no version 9/],
    ['an unknown environment', { environment_id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB' }, /not found/],
    ['a bad cron', { schedule: { type: 'cron', expression: '61 * * * *', timezone: 'UTC' } }, /minute 61/],
    [
      'a bad time zone',
      { schedule: { type: 'cron', expression: '* * * * *', timezone: 'Mars/Base' } },
      /time zone/,
    ],
    [
      'an unknown vault',
      { vault_ids: ['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB'] },
      /vault vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB not found/,
    ],
    ['a malformed vault id', { vault_ids: ['x'] }, /vlt_ id/],
    [
      'an unknown memory store',
      { resources: [{ type: 'memory_store', memory_store_id: 'memstore_01JD2Y3QX9V5M8K7R6T4W2P0AB' }] },
      /not found/,
    ],
    [
      'a file resource',
      { resources: [{ type: 'file', file_id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB' }] },
      /self-hosted/,
    ],
    ['an unknown field', { owner: 'me' }, /unknown field/],
  ])('create refuses %s with 400 and writes nothing', async (_label, patch, message) => {
    const before = await api.sql('SELECT count(*) AS n FROM deployments');
    const body = JSON.parse(JSON.stringify({ ...base(), ...patch }).replace('"AGENT"', `"${agentId}"`));
    const res = await http.post('/v1/deployments', body, { contract: false });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toMatch(message);
    expect(await api.sql('SELECT count(*) AS n FROM deployments')).toEqual(before);
  });

  it('unknown ids are 404', async () => {
    expect((await http.get('/v1/deployments/depl_01JD2Y3QX9V5M8K7R6T4W2P0AB')).status).toBe(404);
    expect((await http.post('/v1/deployments/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB/run')).status).toBe(404);
    expect((await http.get('/v1/deployment_runs/drun_01JD2Y3QX9V5M8K7R6T4W2P0AB')).status).toBe(404);
  });

  describe('credential × endpoint (Workspace API key only)', () => {
    const creds: Record<string, string | undefined> = {};
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      creds.workspace = (await api.issueKey('wrkspc_default')).api_key;
      const h = httpClient(api.url, creds.workspace);
      ids.deployment = (await h.post('/v1/deployments', base())).body.id;
      ids.run = (await h.post(`/v1/deployments/${ids.deployment}/run`)).body.id;
      creds.environment = (await api.issueKey('wrkspc_default', envId)).api_key;
      const revoked = await api.issueKey('wrkspc_default');
      await api.revokeKey(revoked.id);
      creds.revoked = revoked.api_key;
      creds.otherWorkspace = (await api.issueKey(await api.createWorkspace())).api_key;
      creds.missing = undefined;
    });
    const routes: Array<[string, string, (i: Record<string, string>) => string, () => unknown]> = [
      ['POST', 'deployments.create', () => '/v1/deployments', () => base()],
      ['GET', 'deployments.list', () => '/v1/deployments', () => undefined],
      ['GET', 'deployments.retrieve', (i) => `/v1/deployments/${i.deployment}`, () => undefined],
      ['POST', 'deployments.update', (i) => `/v1/deployments/${i.deployment}`, () => ({ description: 'd' })],
      ['POST', 'deployments.pause', (i) => `/v1/deployments/${i.deployment}/pause`, () => undefined],
      ['POST', 'deployments.unpause', (i) => `/v1/deployments/${i.deployment}/unpause`, () => undefined],
      ['POST', 'deployments.run', (i) => `/v1/deployments/${i.deployment}/run`, () => undefined],
      ['GET', 'deployment_runs.list', () => '/v1/deployment_runs', () => undefined],
      ['GET', 'deployment_runs.retrieve', (i) => `/v1/deployment_runs/${i.run}`, () => undefined],
    ];
    const expected: Record<string, [number, string | null]> = {
      workspace: [0, null],
      environment: [403, 'permission_error'],
      revoked: [401, 'authentication_error'],
      missing: [401, 'authentication_error'],
    };
    for (const [cred, [status, type]] of Object.entries(expected)) {
      it.each(routes)(`${cred} key: %s %s`, async (method, _op, path, body) => {
        const res = await httpClient(api.url, creds[cred]).request(method, path(ids), body());
        if (status === 0) expect([200, 201]).toContain(res.status);
        else {
          expect(res.status).toBe(status);
          expect(res.body.error.type).toBe(type);
        }
      });
    }
    it.each(
      routes.filter(
        ([, op]) =>
          op.includes('retrieve') || op.includes('update') || (op.includes('run') && !op.includes('list')),
      ),
    )("another workspace's key gets 404: %s %s", async (method, _op, path, body) => {
      const res = await httpClient(api.url, creds.otherWorkspace).request(method, path(ids), body());
      expect(res.status).toBe(404);
    });
    it('archive follows the same rule', async () => {
      expect(
        (await httpClient(api.url, creds.environment).post(`/v1/deployments/${ids.deployment}/archive`))
          .status,
      ).toBe(403);
      expect(
        (await httpClient(api.url, creds.otherWorkspace).post(`/v1/deployments/${ids.deployment}/archive`))
          .status,
      ).toBe(404);
      expect((await httpClient(api.url, creds.otherWorkspace).get('/v1/deployment_runs')).body.data).toEqual(
        [],
      );
      expect(
        (await httpClient(api.url, creds.workspace).post(`/v1/deployments/${ids.deployment}/archive`)).status,
      ).toBe(200);
    });
  });
});
