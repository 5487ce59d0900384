import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

describe('Agents over HTTP (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  beforeAll(async () => {
    api = await startApi('agents');
    http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  });
  afterAll(() => api.close());

  const toolset = {
    type: 'agent_toolset_20260401',
    default_config: { permission_policy: { type: 'always_allow' } },
  };

  it('creates (201), reads, updates with optimistic versions and keeps every version', async () => {
    const created = await http.post('/v1/agents', {
      name: 'coder',
      model: 'claude-sonnet-4-6',
      tools: [toolset],
      metadata: { team: 'a' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('request-id')).toMatch(/^req_/);
    expect(created.body).toMatchObject({
      type: 'agent',
      name: 'coder',
      version: 1,
      model: { id: 'claude-sonnet-4-6' },
      archived_at: null,
    });
    const id = created.body.id;

    const stale = await http.post(`/v1/agents/${id}`, { version: 0 + 2, system: 'be brief' });
    expect(stale.status).toBe(409);
    expect(stale.body.error.type).toBe('invalid_request_error');
    expect(stale.body.error.message).toMatch(/current version 1/);

    const updated = await http.post(`/v1/agents/${id}`, {
      version: 1,
      system: 'be brief',
      metadata: { team: null, tier: 'gold' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, system: 'be brief', metadata: { tier: 'gold' } });

    const noop = await http.post(`/v1/agents/${id}`, { system: 'be brief' });
    expect(noop.body.version).toBe(2);
    // A stale version is a conflict even when nothing would change.
    expect((await http.post(`/v1/agents/${id}`, { version: 1 })).status).toBe(409);

    expect((await http.get(`/v1/agents/${id}`)).body.version).toBe(2);
    const v1 = await http.get(`/v1/agents/${id}?version=1`);
    expect(v1.body).toMatchObject({ version: 1, system: null, metadata: { team: 'a' } });
    expect((await http.get(`/v1/agents/${id}?version=3`)).status).toBe(404);
    expect((await http.get(`/v1/agents/${id}?version=zero`)).status).toBe(400);

    const versions = await http.get(`/v1/agents/${id}/versions?limit=1`);
    expect(versions.body.data.map((a: { version: number }) => a.version)).toEqual([2]);
    const older = await http.get(`/v1/agents/${id}/versions?limit=1&page=${versions.body.next_page}`);
    expect(older.body.data.map((a: { version: number }) => a.version)).toEqual([1]);
    expect(older.body.next_page).toBeNull();
  });

  it('lists newest first with pagination, time filters and archive exclusion', async () => {
    const ids: string[] = [];
    for (const name of ['l1', 'l2', 'l3'])
      ids.push((await http.post('/v1/agents', { name, model: 'm' })).body.id);
    const first = await http.get('/v1/agents?limit=2');
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
    const second = await http.get(`/v1/agents?limit=2&page=${first.body.next_page}`);
    expect(second.body.data[0].id).toBe(ids[0]);

    const archived = await http.post(`/v1/agents/${ids[1]}/archive`);
    expect(archived.body.archived_at).not.toBeNull();
    expect((await http.post(`/v1/agents/${ids[1]}/archive`)).body.archived_at).toBe(
      archived.body.archived_at,
    );
    const visible = (await http.get('/v1/agents?limit=100')).body.data.map((a: { id: string }) => a.id);
    expect(visible).not.toContain(ids[1]);
    expect(
      (await http.get('/v1/agents?limit=100&include_archived=true')).body.data.map(
        (a: { id: string }) => a.id,
      ),
    ).toContain(ids[1]);
    const updateArchived = await http.post(`/v1/agents/${ids[1]}`, { name: 'x' });
    expect(updateArchived.status).toBe(409);

    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await http.get(`/v1/agents?created_at[gte]=${future}`)).body.data).toEqual([]);
    expect((await http.get(`/v1/agents?created_at[lte]=${future}&limit=1`)).body.data).toHaveLength(1);
  });

  it('resolves multiagent rosters against real agents of the workspace', async () => {
    const worker = (await http.post('/v1/agents', { name: 'worker', model: 'm' })).body;
    const lead = await http.post('/v1/agents', {
      name: 'lead',
      model: 'm',
      multiagent: {
        type: 'coordinator',
        agents: [worker.id, { type: 'self' }, { type: 'advisor', model: 'claude-opus-4-8' }],
      },
    });
    expect(lead.status).toBe(201);
    expect(lead.body.multiagent.agents[0]).toEqual({ type: 'agent', id: worker.id, version: 1 });
    const nested = await http.post('/v1/agents', {
      name: 'boss',
      model: 'm',
      multiagent: { type: 'coordinator', agents: [lead.body.id] },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toMatch(/depth is limited to 1/);
  });

  describe('bad input: documented status and envelope, nothing written', () => {
    const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, RegExp]> = [
      [
        'malformed JSON',
        () => http.post('/v1/agents', undefined, { raw: '{"name": ' }),
        400,
        /not valid JSON/,
      ],
      ['a wrong type', () => http.post('/v1/agents', { name: 5, model: 'm' }), 400, /name must be a string/],
      [
        'an unknown enum value',
        () => http.post('/v1/agents', { name: 'a', model: { id: 'm', speed: 'warp' } }),
        400,
        /model.speed must be one of/,
      ],
      [
        'an oversize name',
        () => http.post('/v1/agents', { name: 'x'.repeat(257), model: 'm' }),
        400,
        /at most 256/,
      ],
      [
        'oversize metadata',
        () => http.post('/v1/agents', { name: 'a', model: 'm', metadata: { k: 'v'.repeat(513) } }),
        400,
        /exceeds 512/,
      ],
      ['an array body', () => http.post('/v1/agents', [1]), 400, /body must be an object/],
      ['an unknown query parameter', () => http.get('/v1/agents?colour=red'), 400, /unknown query parameter/],
      [
        'a bad limit',
        () => http.get('/v1/agents?limit=1001'),
        400,
        /limit must be an integer from 1 to 1000/,
      ],
      ['a forged page cursor', () => http.get('/v1/agents?page=Zm9v'), 400, /page cursor/],
      ['a wrong id prefix', () => http.get('/v1/agents/env_01JD2Y3QX9V5M8K7R6T4W2P0AB'), 404, /not found/],
      [
        'an unknown agent',
        () => http.post('/v1/agents/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB', { name: 'x' }),
        404,
        /not found/,
      ],
      ['an unknown route', () => http.get('/v1/nothing-here', { contract: false }), 404, /no such route/],
    ];
    it.each(cases)('%s', async (_label, send, status, message) => {
      const before = await api.sql<{ n: number }>(
        'SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM agent_versions) AS n',
      );
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.body.type).toBe('error');
      expect(res.body.request_id).toMatch(/^req_/);
      expect(res.body.error.message).toMatch(message);
      const after = await api.sql<{ n: number }>(
        'SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM agent_versions) AS n',
      );
      expect(after[0]!.n).toBe(before[0]!.n);
    });

    it('a body over the limit is 413 request_too_large', async () => {
      const res = await http.post('/v1/agents', {
        name: 'a',
        model: 'm',
        system: 'x'.repeat(33 * 1024 * 1024),
      });
      expect(res.status).toBe(413);
      expect(res.body.error.type).toBe('request_too_large');
    });
  });
});
