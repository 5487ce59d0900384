import { newId } from '@mango/platform-ids';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Agents pin Skills of their Workspace; a Session freezes the exact versions at creation (docs/api-guide.md, Skills,
 * issue #6). Skills are inserted directly (apps/files owns their upload); the checks are apps/api's.
 */
describe('Skill pins on Agents and Sessions (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  const READ = [{ type: 'agent_toolset_20260401' }];

  /** A Skill with versions 1..n (n may be 0), its latest_version the highest. */
  const createSkill = async (versions: number, workspaceId = 'wrkspc_default'): Promise<string> => {
    const id = newId('skill');
    await api.sql(
      `INSERT INTO skills (id, workspace_id, latest_version, next_version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, now(), now())`,
      [id, workspaceId, versions || null, versions + 1],
    );
    for (let v = 1; v <= versions; v++)
      await api.sql(
        `INSERT INTO skill_versions (skill_id, version, workspace_id, name, description, directory, object_key,
                                     archive_size_bytes, archive_sha256, expanded_size_bytes, file_count, created_at)
         VALUES ($1, $2, $3, 's', 'd', 's', $4, 1, $5, 1, 1, now())`,
        [id, v, workspaceId, `k/${id}/${v}`, '0'.repeat(64)],
      );
    return id;
  };
  const addVersion = async (id: string, v: number) => {
    await api.sql(
      `INSERT INTO skill_versions (skill_id, version, workspace_id, name, description, directory, object_key,
                                   archive_size_bytes, archive_sha256, expanded_size_bytes, file_count, created_at)
       VALUES ($1, $2, 'wrkspc_default', 's', 'd', 's', $3, 1, $4, 1, 1, now())`,
      [id, v, `k/${id}/${v}`, '0'.repeat(64)],
    );
    await api.sql('UPDATE skills SET latest_version = $2, next_version = $2 + 1 WHERE id = $1', [id, v]);
  };

  beforeAll(async () => {
    api = await startApi('skillpins');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  });
  afterAll(() => api.close());

  it('Agent create accepts existing Skills (latest or an existing version) and keeps `latest` symbolic', async () => {
    const a = await createSkill(2);
    const b = await createSkill(1);
    const res = await ws.post('/v1/agents', {
      name: 'n',
      model: 'm',
      tools: READ,
      skills: [
        { type: 'custom', skill_id: a, version: '1' },
        { type: 'custom', skill_id: b },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.skills).toEqual([
      { type: 'custom', skill_id: a, version: '1' },
      { type: 'custom', skill_id: b, version: 'latest' },
    ]);
  });

  it.each([
    ['an unknown Skill', async () => ({ skill_id: newId('skill') })],
    [
      "another Workspace's Skill",
      async () => ({ skill_id: await createSkill(1, await api.createWorkspace()) }),
    ],
    ['a version that does not exist', async () => ({ skill_id: await createSkill(1), version: '2' })],
    ['latest of a Skill without versions', async () => ({ skill_id: await createSkill(0) })],
  ])('Agent create and update refuse %s with 400 and store nothing', async (_label, pin) => {
    const skill = { type: 'custom', ...(await pin()) };
    const agents = (await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM agent_versions'))[0].n;
    const created = await ws.post('/v1/agents', { name: 'n', model: 'm', tools: READ, skills: [skill] });
    expect([created.status, created.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect(created.body.error.message).toMatch(/skills\[0\]/);
    const agent = (await ws.post('/v1/agents', { name: 'n', model: 'm', tools: READ })).body;
    const updated = await ws.post(`/v1/agents/${agent.id}`, { skills: [skill] });
    expect([updated.status, updated.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect((await ws.get(`/v1/agents/${agent.id}`)).body).toMatchObject({ version: 1, skills: [] });
    expect((await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM agent_versions'))[0].n).toBe(
      agents + 1,
    );
  });

  it('an unchanged pin of a since-deleted Skill does not block unrelated Agent updates', async () => {
    const s = await createSkill(1);
    const agent = (
      await ws.post('/v1/agents', {
        name: 'n',
        model: 'm',
        tools: READ,
        skills: [{ type: 'custom', skill_id: s }],
      })
    ).body;
    await api.sql('DELETE FROM skills WHERE id = $1', [s]);
    const res = await ws.post(`/v1/agents/${agent.id}`, { description: 'still fine' });
    expect([res.status, res.body.version]).toEqual([200, 2]);
  });

  it('a Session freezes `latest` to the concrete version at creation; later versions do not leak in', async () => {
    const s = await createSkill(2);
    const t = await createSkill(3);
    const agent = (
      await ws.post('/v1/agents', {
        name: 'n',
        model: 'm',
        tools: READ,
        skills: [
          { type: 'custom', skill_id: s },
          { type: 'custom', skill_id: t, version: '1' },
        ],
      })
    ).body;
    const first = await ws.post('/v1/sessions', { agent: agent.id, environment_id: envId });
    expect(first.status).toBe(201);
    expect(first.body.agent.skills).toEqual([
      { type: 'custom', skill_id: s, version: '2' },
      { type: 'custom', skill_id: t, version: '1' },
    ]);
    await addVersion(s, 3);
    expect((await ws.get(`/v1/sessions/${first.body.id}`)).body.agent.skills[0].version).toBe('2');
    const second = await ws.post('/v1/sessions', { agent: agent.id, environment_id: envId });
    expect(second.body.agent.skills[0]).toEqual({ type: 'custom', skill_id: s, version: '3' });
    // Overrides are frozen the same way.
    const over = await ws.post('/v1/sessions', {
      agent: { type: 'agent_with_overrides', id: agent.id, skills: [{ type: 'custom', skill_id: t }] },
      environment_id: envId,
    });
    expect(over.body.agent.skills).toEqual([{ type: 'custom', skill_id: t, version: '3' }]);
  });

  it('Session create is 400 (and stores nothing) when a pinned Skill no longer exists', async () => {
    const s = await createSkill(1);
    const agent = (
      await ws.post('/v1/agents', {
        name: 'n',
        model: 'm',
        tools: READ,
        skills: [{ type: 'custom', skill_id: s }],
      })
    ).body;
    await api.sql('DELETE FROM skills WHERE id = $1', [s]);
    const sessions = (await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM sessions'))[0].n;
    const res = await ws.post('/v1/sessions', { agent: agent.id, environment_id: envId });
    expect([res.status, res.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect((await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM sessions'))[0].n).toBe(sessions);
  });

  it('Session create is 400 (and stores nothing) when overrides drop the read tool the pinned Skills need', async () => {
    const s = await createSkill(1);
    const agent = (
      await ws.post('/v1/agents', {
        name: 'n',
        model: 'm',
        tools: READ,
        skills: [{ type: 'custom', skill_id: s }],
      })
    ).body;
    const sessions = (await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM sessions'))[0].n;
    const res = await ws.post('/v1/sessions', {
      agent: {
        type: 'agent_with_overrides',
        id: agent.id,
        tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'read', enabled: false }] }],
      },
      environment_id: envId,
    });
    expect([res.status, res.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect(res.body.error.message).toMatch(/skills require the read tool/);
    expect((await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM sessions'))[0].n).toBe(sessions);
  });
});
