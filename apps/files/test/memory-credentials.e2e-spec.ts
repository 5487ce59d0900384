import { createHash } from 'node:crypto';
import { httpClient } from '@mango/testing';
import { Client, memoryFixtures } from './memory-support';
import { FilesUnderTest, startFiles } from './support';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

type Cred = 'workspace' | 'environment' | 'own' | 'ownReadOnly' | 'otherSession' | 'reclaimed' | 'expired';

/**
 * Credential × endpoint for `/v1/memory_stores*` on a real apps/files process. The Session's Work token
 * reaches only the Stores attached to its Session, writes only through `read_write` attachments, and
 * a token whose lease was reclaimed or ran out is refused (401) on every route — checked again inside
 * the writing transaction.
 */
describe('Memory Stores: credentials × endpoints (real apps/files process)', () => {
  let files: FilesUnderTest;
  let fx: ReturnType<typeof memoryFixtures>;
  let ws: Client;
  const creds = {} as Record<Cred, Client>;
  let rw: string; // attached read_write to the Session
  let ro: string; // attached read_only to the Session
  let sessionId: string;

  beforeAll(async () => {
    files = await startFiles('memorycreds');
    fx = memoryFixtures(files);
    const key = await files.issueKey('wrkspc_default');
    ws = httpClient(files.url, key.api_key);
    const env = await files.createEnvironment('wrkspc_default');
    creds.workspace = ws;
    creds.environment = httpClient(files.url, (await files.issueKey('wrkspc_default', env)).api_key);
    rw = (await ws.post('/v1/memory_stores', { name: 'Shared notes' })).body.id;
    ro = (await ws.post('/v1/memory_stores', { name: 'Reference' })).body.id;
    sessionId = await fx.createSession('wrkspc_default', env, [
      { type: 'memory_store', memory_store_id: rw },
      { type: 'memory_store', memory_store_id: ro, access: 'read_only', instructions: 'look only' },
    ]);
    const own = await fx.sessionWorkToken('wrkspc_default', env, sessionId);
    creds.own = httpClient(files.url, own.token);
    creds.ownReadOnly = creds.own;
    const other = await fx.createSession('wrkspc_default', env, []);
    creds.otherSession = httpClient(
      files.url,
      (await fx.sessionWorkToken('wrkspc_default', env, other)).token,
    );
    const s3 = await fx.createSession('wrkspc_default', env, [{ type: 'memory_store', memory_store_id: rw }]);
    const reclaimed = await fx.sessionWorkToken('wrkspc_default', env, s3);
    await fx.reclaim(reclaimed.workId);
    creds.reclaimed = httpClient(files.url, reclaimed.token);
    const s4 = await fx.createSession('wrkspc_default', env, [{ type: 'memory_store', memory_store_id: rw }]);
    const expired = await fx.sessionWorkToken('wrkspc_default', env, s4);
    await fx.expireLease(expired.workId);
    creds.expired = httpClient(files.url, expired.token);
  });
  afterAll(() => files.close());

  const store = (c: Cred) => (c === 'ownReadOnly' ? ro : rw);
  const newMemory = async (storeId: string) =>
    (await ws.post(`/v1/memory_stores/${storeId}/memories`, { path: `/m/${Math.random()}`, content: 'x' }))
      .body as {
      id: string;
      memory_version_id: string;
    };

  type Call = (c: Client, storeId: string) => Promise<{ status: number }>;
  const endpoints: Record<string, { call: Call; ok: number; work: 'none' | 'read' | 'write' }> = {
    'create store': { call: (c) => c.post('/v1/memory_stores', { name: 'n' }), ok: 201, work: 'none' },
    'list stores': { call: (c) => c.get('/v1/memory_stores'), ok: 200, work: 'none' },
    'get store': { call: (c, s) => c.get(`/v1/memory_stores/${s}`), ok: 200, work: 'read' },
    'update store': {
      call: (c, s) => c.post(`/v1/memory_stores/${s}`, { metadata: { k: 'v' } }),
      ok: 200,
      work: 'none',
    },
    'archive store': {
      call: async (c) =>
        c.post(`/v1/memory_stores/${(await ws.post('/v1/memory_stores', { name: 'a' })).body.id}/archive`),
      ok: 200,
      work: 'none',
    },
    'delete store': {
      call: async (c) =>
        c.delete(`/v1/memory_stores/${(await ws.post('/v1/memory_stores', { name: 'd' })).body.id}`),
      ok: 200,
      work: 'none',
    },
    'create memory': {
      call: (c, s) =>
        c.post(`/v1/memory_stores/${s}/memories`, { path: `/c/${Math.random()}`, content: 'new' }),
      ok: 201,
      work: 'write',
    },
    'list memories': { call: (c, s) => c.get(`/v1/memory_stores/${s}/memories`), ok: 200, work: 'read' },
    'get memory': {
      call: async (c, s) => c.get(`/v1/memory_stores/${s}/memories/${(await newMemory(s)).id}`),
      ok: 200,
      work: 'read',
    },
    'update memory': {
      call: async (c, s) =>
        c.post(`/v1/memory_stores/${s}/memories/${(await newMemory(s)).id}`, {
          content: 'changed',
          precondition: { type: 'content_sha256', content_sha256: sha('x') },
        }),
      ok: 200,
      work: 'write',
    },
    'delete memory': {
      call: async (c, s) => c.delete(`/v1/memory_stores/${s}/memories/${(await newMemory(s)).id}`),
      ok: 200,
      work: 'write',
    },
    'list versions': {
      call: (c, s) => c.get(`/v1/memory_stores/${s}/memory_versions`),
      ok: 200,
      work: 'none',
    },
    'get version': {
      call: async (c, s) =>
        c.get(`/v1/memory_stores/${s}/memory_versions/${(await newMemory(s)).memory_version_id}`),
      ok: 200,
      work: 'none',
    },
    'redact version': {
      call: async (c, s) => {
        const m = await newMemory(s);
        await ws.post(`/v1/memory_stores/${s}/memories/${m.id}`, { content: 'y' });
        return c.post(`/v1/memory_stores/${s}/memory_versions/${m.memory_version_id}/redact`);
      },
      ok: 200,
      work: 'none',
    },
  };

  function expected(cred: Cred, e: (typeof endpoints)[string]): number {
    switch (cred) {
      case 'workspace':
        return e.ok;
      case 'environment':
        return 403;
      case 'reclaimed':
      case 'expired':
        return 401;
      case 'otherSession':
        return e.work === 'none' ? 403 : 404;
      case 'own':
        return e.work === 'none' ? 403 : e.ok;
      case 'ownReadOnly':
        return e.work === 'none' ? 403 : e.work === 'write' ? 403 : e.ok;
    }
  }

  const rows: Array<[string, Cred, number]> = [];
  for (const [name, e] of Object.entries(endpoints))
    for (const cred of [
      'workspace',
      'environment',
      'own',
      'ownReadOnly',
      'otherSession',
      'reclaimed',
      'expired',
    ] as Cred[])
      rows.push([name, cred, expected(cred, e)]);

  it.each(rows)('%s with %s → %i', async (name, cred, status) => {
    const before = await fx.memoryState();
    const res = await endpoints[name]!.call(creds[cred], store(cred));
    expect(res.status).toBe(status);
    // A refused write leaves nothing behind (the fixtures' own writes are made with the Workspace key).
    if (status >= 400 && endpoints[name]!.work === 'write') {
      const after = await fx.memoryState();
      expect(after.cleanups).toBe(0);
      expect(after.objects - before.objects).toBeLessThanOrEqual(name === 'create memory' ? 0 : 1);
    }
  });

  it('records the Session as the actor of Work-token writes, and filters by it', async () => {
    const created = await creds.own.post(`/v1/memory_stores/${rw}/memories`, {
      path: '/by-worker',
      content: 'w',
    });
    expect(created.status).toBe(201);
    const v = await ws.get(`/v1/memory_stores/${rw}/memory_versions/${created.body.memory_version_id}`);
    expect(v.body.created_by).toEqual({ type: 'session_actor', session_id: sessionId });
    const bySession = await ws.get(`/v1/memory_stores/${rw}/memory_versions?session_id=${sessionId}`);
    expect(bySession.body.data.map((x: { memory_id: string }) => x.memory_id)).toContain(created.body.id);
    expect(
      bySession.body.data.every(
        (x: { created_by: { type: string } }) => x.created_by.type === 'session_actor',
      ),
    ).toBe(true);
  });

  it('a write whose lease ends before it commits is refused and leaves no object or row', async () => {
    const env = await files.createEnvironment('wrkspc_default');
    const s = await fx.createSession('wrkspc_default', env, [{ type: 'memory_store', memory_store_id: rw }]);
    const tok = await fx.sessionWorkToken('wrkspc_default', env, s);
    const worker = httpClient(files.url, tok.token);
    const ok = await worker.post(`/v1/memory_stores/${rw}/memories`, { path: '/lease/ok', content: 'a' });
    expect(ok.status).toBe(201);
    await fx.expireLease(tok.workId);
    const before = await fx.memoryState();
    const refused = await worker.post(`/v1/memory_stores/${rw}/memories/${ok.body.id}`, { content: 'late' });
    expect(refused.status).toBe(401);
    expect(await fx.memoryState()).toEqual(before);
    expect((await ws.get(`/v1/memory_stores/${rw}/memories/${ok.body.id}`)).body.content).toBe('a');
  });

  it('shows attachments with their mount paths and access', async () => {
    const rows = await files.sql<{
      memory_store_id: string;
      access: string;
      mount_path: string;
      instructions: string | null;
    }>(
      'SELECT memory_store_id, access, mount_path, instructions FROM session_memory_stores WHERE session_id = $1 ORDER BY position',
      [sessionId],
    );
    expect(rows).toEqual([
      {
        memory_store_id: rw,
        access: 'read_write',
        mount_path: '/mnt/memory/shared-notes',
        instructions: null,
      },
      {
        memory_store_id: ro,
        access: 'read_only',
        mount_path: '/mnt/memory/reference',
        instructions: 'look only',
      },
    ]);
  });
});
