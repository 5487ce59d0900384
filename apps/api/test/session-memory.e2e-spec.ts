import { newId } from '@mango/platform-ids';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Session create attaches Memory Stores (`memory_store` resources, openapi.yaml `SessionResource`): validated, snapshot
 * (name, description, mount path, access) in the creating transaction, shown on the Session — also to the
 * Session's Work token, which is how the worker learns what to mount. Bad references store nothing.
 */
describe('Session Memory Store attachments (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let agentId: string;
  let envId: string;

  const store = async (name: string, opts: { workspaceId?: string; archived?: boolean } = {}) => {
    const id = newId('memoryStore');
    await api.sql(
      `INSERT INTO memory_stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at)
       VALUES ($1, $2, $3, 'about ' || $3, '{}', now(), now(), CASE WHEN $4 THEN now() END)`,
      [id, opts.workspaceId ?? 'wrkspc_default', name, opts.archived ?? false],
    );
    return id;
  };
  const sessionCount = async () =>
    (await api.sql<{ n: number }>('SELECT count(*)::int AS n FROM sessions'))[0]!.n;

  beforeAll(async () => {
    api = await startApi('sessionmemory');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    agentId = (await ws.post('/v1/agents', { name: 'coder', model: 'claude-sonnet-4-6' })).body.id;
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  });
  afterAll(() => api.close());

  it('attaches stores with access, instructions and unique mount paths, shown to the Workspace key and the Work token', async () => {
    const a = await store('User Preferences');
    const b = await store('user preferences!');
    const created = await ws.post('/v1/sessions', {
      agent: agentId,
      environment_id: envId,
      resources: [
        { type: 'memory_store', memory_store_id: a, instructions: 'keep it short' },
        { type: 'memory_store', memory_store_id: b, access: 'read_only' },
      ],
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(created.status).toBe(201);
    const expected = [
      {
        type: 'memory_store',
        memory_store_id: a,
        access: 'read_write',
        instructions: 'keep it short',
        name: 'User Preferences',
        description: 'about User Preferences',
        mount_path: '/mnt/memory/user-preferences',
      },
      {
        type: 'memory_store',
        memory_store_id: b,
        access: 'read_only',
        instructions: null,
        name: 'user preferences!',
        description: 'about user preferences!',
        mount_path: '/mnt/memory/user-preferences-2',
      },
    ];
    expect(created.body.resources).toEqual(expected);
    expect((await ws.get(`/v1/sessions/${created.body.id}`)).body.resources).toEqual(expected);

    // The worker's view: Poll, Ack, then the Session read with the Work token.
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll`);
    expect(polled.body.data).toEqual({ type: 'session', id: created.body.id });
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const token = JSON.parse(Buffer.from(polled.body.secret, 'base64url').toString()).sessions_token;
    const worker = httpClient(api.url, token);
    expect((await worker.get(`/v1/sessions/${created.body.id}`)).body.resources).toEqual(expected);
    // List, update and archive render the same attachments.
    const listed = (await ws.get('/v1/sessions?limit=100')).body.data.find(
      (x: { id: string }) => x.id === created.body.id,
    );
    expect(listed.resources).toEqual(expected);
    expect((await ws.post(`/v1/sessions/${created.body.id}`, { title: 't' })).body.resources).toEqual(
      expected,
    );
    expect((await ws.post(`/v1/sessions/${created.body.id}/archive`)).body.resources).toEqual(expected);
  });

  it.each<[string, (ids: { archived: string; foreign: string }) => unknown[], RegExp]>([
    ['a file resource', () => [{ type: 'file', file_id: 'file_x' }], /only memory_store/],
    [
      'an unknown store',
      () => [{ type: 'memory_store', memory_store_id: newId('memoryStore') }],
      /not found/,
    ],
    [
      "another workspace's store",
      ({ foreign }) => [{ type: 'memory_store', memory_store_id: foreign }],
      /not found/,
    ],
    [
      'an archived store',
      ({ archived }) => [{ type: 'memory_store', memory_store_id: archived }],
      /archived/,
    ],
    [
      'a bad access',
      ({ archived }) => [{ type: 'memory_store', memory_store_id: archived, access: 'all' }],
      /access/,
    ],
  ])('refuses %s with 400 and creates nothing', async (_name, resources, message) => {
    const ids = {
      archived: await store('old', { archived: true }),
      foreign: await store('theirs', { workspaceId: await api.createWorkspace() }),
    };
    const before = await sessionCount();
    const attached = await api.sql('SELECT * FROM session_memory_stores ORDER BY session_id, position');
    const res = await ws.post('/v1/sessions', {
      agent: agentId,
      environment_id: envId,
      resources: resources(ids),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(message);
    expect(await sessionCount()).toBe(before);
    expect(await api.sql('SELECT * FROM session_memory_stores ORDER BY session_id, position')).toEqual(
      attached,
    );
  });
});
