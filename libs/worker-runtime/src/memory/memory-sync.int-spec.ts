import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as Minio } from 'minio';
import { ApiKeysService, digestCredential, generateCredential } from '@mango/feature-auth';
import { parseMemoryAttachments } from '@mango/domain-memory';
import { attachSessionMemoryStores, createDataSource } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import {
  answers,
  AppProcess,
  createTestDatabase,
  freePort,
  httpClient,
  startApp,
  TcpGate,
  TestDatabase,
} from '@mango/testing';
import type { DataSource } from 'typeorm';
import { MangoClient } from '@mango/sdk';
import { HttpMemoryApi, MemoryApi, sdkMemoryApi } from './memory-client';
import { MemoryAttachment, MemoryMountError, MemorySync } from './memory-sync';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * MemorySync against a real apps/files process (PostgreSQL, S3) with a real Session Work token: mount,
 * pull, push through preconditions, remote-wins conflicts, deletions after a second observation, the
 * marker, read-only attachments, the final sync and the push-only flush.
 */
describe('MemorySync (real apps/files, PostgreSQL, S3)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let app: AppProcess;
  let url: string;
  let api: ReturnType<typeof httpClient>;
  let envId: string;
  const bucket = `mango-memsync-${randomBytes(3).toString('hex')}`;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('memorysync');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    app = await startApp(
      'apps/files/src/main.ts',
      {
        MANGO_DATABASE_URL: db.url,
        MANGO_FILES_PORT: String(port),
        MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
        MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
        MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
        MANGO_S3_BUCKET: bucket,
        MANGO_LOG_LEVEL: 'warn',
      },
      answers(`${url}/healthz`),
    );
    api = httpClient(
      url,
      (await new ApiKeysService(ds).create({ workspaceId: 'wrkspc_default', label: 't' })).api_key,
    );
    envId = newId('environment');
    await ds.query(
      `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', $1, '{"type":"self_hosted"}', '{}', now(), now())`,
      [envId],
    );
  });
  afterAll(async () => {
    await app.stop();
    await ds.destroy();
    await db.drop();
    const s3 = new URL(process.env.MANGO_S3_ENDPOINT!);
    const minio = new Minio({
      endPoint: s3.hostname,
      port: Number(s3.port),
      useSSL: false,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      pathStyle: true,
    });
    const names: string[] = [];
    for await (const o of minio.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length) await minio.removeObjects(bucket, names);
    await minio.removeBucket(bucket).catch(() => undefined);
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const memoryApi = (via: 'http' | 'sdk', token: string): MemoryApi =>
    via === 'http'
      ? new HttpMemoryApi({ baseUrl: url, token })
      : sdkMemoryApi(new MangoClient({ baseUrl: url, apiKey: token, maxRetries: 0 }));

  /** A Store with memories, a Session it is attached to, the Session's live Work token and a temp root. */
  async function attachedStore(
    memories: Record<string, string>,
    access: 'read_write' | 'read_only' = 'read_write',
  ) {
    const store = (await api.post('/v1/memory_stores', { name: `Notes ${randomBytes(2).toString('hex')}` }))
      .body;
    for (const [path, content] of Object.entries(memories))
      expect((await api.post(`/v1/memory_stores/${store.id}/memories`, { path, content })).status).toBe(201);
    const sessionId = newId('session');
    let attachments: MemoryAttachment[] = [];
    await ds.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                               usage, last_seq, created_at, updated_at)
         VALUES ($1, 'wrkspc_default', $2, $3, 1, '{}', 'running', '{}', '{}', 0, now(), now())`,
        [sessionId, envId, newId('agent')],
      );
      attachments = await attachSessionMemoryStores(
        tx,
        'wrkspc_default',
        sessionId,
        parseMemoryAttachments([{ type: 'memory_store', memory_store_id: store.id, access }]),
      );
    });
    const token = generateCredential('workToken');
    await ds.query(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, token_digest,
                               created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                               lease_expires_at, ttl_seconds)
       VALUES ($1, 'wrkspc_default', $2, 'session', $3, 'active', '{}', $4, now(), now(), now(), now(), now(),
               now() + interval '5 minutes', 300)`,
      [newId('work'), envId, sessionId, digestCredential(token)],
    );
    const root = await mkdtemp(join(tmpdir(), 'mango-memory-'));
    dirs.push(root);
    return { store, sessionId, attachments, token, root };
  }

  /** A Store with memories, a Session it is attached to, the Session's live Work token, and a MemorySync on a temp root. */
  async function setup(
    memories: Record<string, string>,
    access: 'read_write' | 'read_only' = 'read_write',
    intervalMs = 0,
    via: 'http' | 'sdk' = 'http',
  ) {
    const { store, sessionId, attachments, token, root } = await attachedStore(memories, access);
    const sync = new MemorySync({
      client: memoryApi(via, token),
      sessionId,
      attachments,
      root,
      intervalMs,
    });
    const roots = await sync.start();
    const dir = roots[0]!.path;
    const remote = async () => {
      const out: Record<string, string> = {};
      const list = await api.get(`/v1/memory_stores/${store.id}/memories?view=full&limit=20`);
      for (const m of list.body.data) out[m.path] = m.content;
      return out;
    };
    const idOf = async (path: string) =>
      (await api.get(`/v1/memory_stores/${store.id}/memories`)).body.data.find(
        (m: { path: string }) => m.path === path,
      )?.id as string;
    const file = (path: string) => join(dir, ...path.slice(1).split('/'));
    return { store, sessionId, sync, roots, dir, remote, idOf, file, attachments };
  }

  it('mounts at <root>/<slug> with a marker and pulls every Memory; an existing root is refused and left untouched', async () => {
    const t = await setup({ '/a.md': 'alpha', '/dir/b.md': 'beta' });
    expect(t.attachments[0]!.mount_path).toMatch(/^\/mnt\/memory\/notes-[0-9a-f]{4}$/);
    expect(t.dir.endsWith(t.attachments[0]!.mount_path!.split('/').pop()!)).toBe(true);
    expect(t.roots).toEqual([{ path: t.dir, readOnly: false }]);
    expect(await readFile(t.file('/a.md'), 'utf8')).toBe('alpha');
    expect(await readFile(t.file('/dir/b.md'), 'utf8')).toBe('beta');
    expect(await readFile(join(t.dir, '.mango-memory-store'), 'utf8')).toBe(`version 1\n${t.store.id}\n`);
    const again = new MemorySync({
      client: new HttpMemoryApi({ baseUrl: url, token: 'unused' }),
      sessionId: t.sessionId,
      attachments: t.attachments,
      root: join(t.dir, '..'),
      intervalMs: 0,
    });
    await expect(again.start()).rejects.toThrow(MemoryMountError);
    // The refused sync's dispose (what an activation does after a failed start) removes nothing it did not create.
    await again.dispose({ removeDirs: true });
    expect(await readFile(t.file('/a.md'), 'utf8')).toBe('alpha');
    await t.sync.dispose();
    await expect(stat(t.dir)).rejects.toThrow(/ENOENT/);
  });

  it.each(['http', 'sdk'] as const)(
    'pushes local edits with a precondition and new files as creates, recorded as the Session (%s client)',
    async (via) => {
      const t = await setup({ '/a.md': 'alpha' }, 'read_write', 0, via);
      await writeFile(t.file('/a.md'), 'alpha 2');
      await writeFile(t.file('/new.md'), 'fresh');
      const report = await t.sync.syncOnce();
      expect(report).toMatchObject({ pushed: 2, pulled: 0, deleted: 0, refused: [] });
      expect(await t.remote()).toEqual({ '/a.md': 'alpha 2', '/new.md': 'fresh' });
      const versions = await api.get(
        `/v1/memory_stores/${t.store.id}/memory_versions?session_id=${t.sessionId}`,
      );
      expect(versions.body.data.map((v: { operation: string }) => v.operation).sort()).toEqual([
        'created',
        'modified',
      ]);
      // Nothing changed: nothing sent.
      expect(await t.sync.syncOnce()).toMatchObject({ pushed: 0, pulled: 0 });
      await t.sync.dispose();
    },
  );

  it('a file that starts with a byte-order mark is pushed once, mark included: later passes send nothing', async () => {
    const t = await setup({});
    await writeFile(t.file('/bom.md'), Buffer.from('\ufeffwith a mark', 'utf8'));
    expect(await t.sync.syncOnce()).toMatchObject({ pushed: 1, refused: [] });
    expect(await t.remote()).toEqual({ '/bom.md': '\ufeffwith a mark' });
    // The stored digest is the file's: nothing to push again (before, every pass made a new version).
    expect(await t.sync.syncOnce()).toMatchObject({ pushed: 0, pulled: 0 });
    expect(await t.sync.syncOnce()).toMatchObject({ pushed: 0, pulled: 0 });
    await t.sync.dispose();
  });

  it('a temporary failure of the first download is retried until the API answers, each time on an emptied root: a Memory deleted meanwhile is not pushed back', async () => {
    const memories: Record<string, string> = {};
    for (let i = 0; i < 21; i++) memories[`/p/${String(i).padStart(2, '0')}.md`] = `note ${i}`;
    const t = await attachedStore(memories);
    // Closed: connections are refused, as while the API (or the supervisor's socket in front of it) restarts.
    const gate = new TcpGate(await freePort(), new URL(url));
    let firstPage: string[] = [];
    let deleted: string | undefined;
    // The second attempt: page 1 is written locally; before page 2, a Memory of page 1 is deleted
    // remotely and the connection is cut for 300 ms.
    class CutMidDownload extends HttpMemoryApi {
      override async list(storeId: string, q: Parameters<MemoryApi['list']>[1], signal?: AbortSignal) {
        if (q.page && deleted === undefined) {
          deleted = firstPage[0]!;
          const id = (await api.get(`/v1/memory_stores/${t.store.id}/memories?limit=100`)).body.data.find(
            (m: { path: string }) => m.path === deleted,
          ).id;
          expect((await api.delete(`/v1/memory_stores/${t.store.id}/memories/${id}`)).status).toBe(200);
          await gate.close();
          setTimeout(() => void gate.open(), 300);
        }
        const page = await super.list(storeId, q, signal);
        if (!q.page) firstPage = page.data.map((m) => m.path);
        return page;
      }
    }
    const client = new CutMidDownload({ baseUrl: gate.url, token: t.token });
    const sync = new MemorySync({
      client,
      sessionId: t.sessionId,
      attachments: t.attachments,
      root: t.root,
      backoffBaseMs: 200,
    });
    setTimeout(() => void gate.open(), 300);
    try {
      const [{ path: dir }] = await sync.start();
      expect(deleted).toBeDefined();
      const local = (await readdir(join(dir, 'p'))).map((f) => `/p/${f}`).sort();
      expect(local).toEqual(
        Object.keys(memories)
          .filter((p) => p !== deleted)
          .sort(),
      );
      // Attempt 1 refused (never reached the API), attempt 2 cut before its second page, attempt 3 whole
      // (20 Memories left: one page).
      expect(gate.count('/memories?')).toBeGreaterThanOrEqual(2);
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ pushed: 0, deleted: 0 });
      const after = (await api.get(`/v1/memory_stores/${t.store.id}/memories?limit=100`)).body.data.map(
        (m: { path: string }) => m.path,
      );
      expect(after).not.toContain(deleted);
      expect(after).toHaveLength(20);
    } finally {
      await sync.dispose();
      await gate.close();
    }
  });

  it('a refusal is not retried, and a temporary failure is given up after mountAttempts: MemoryMountError either way', async () => {
    const t = await attachedStore({ '/a.md': 'alpha' });
    const gate = new TcpGate(await freePort(), new URL(url));
    await gate.open();
    const refused = new MemorySync({
      client: new HttpMemoryApi({ baseUrl: gate.url, token: generateCredential('workToken') }),
      sessionId: t.sessionId,
      attachments: t.attachments,
      root: t.root,
      backoffBaseMs: 20,
    });
    const refusal = await refused.start().catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(MemoryMountError);
    expect(String(refusal)).toContain('401 authentication_error');
    expect(String(refusal)).not.toMatch(/after \d+ attempts/);
    expect(gate.count('/memories?')).toBe(1);
    await gate.close();
    const root = await mkdtemp(join(tmpdir(), 'mango-memory-'));
    dirs.push(root);
    const unreachable = new MemorySync({
      client: new HttpMemoryApi({ baseUrl: gate.url, token: t.token }),
      sessionId: t.sessionId,
      attachments: t.attachments,
      root,
      mountAttempts: 3,
      backoffBaseMs: 20,
    });
    const failed = await unreachable.start().catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(MemoryMountError);
    expect(String(failed)).toMatch(/fetch failed \(after 3 attempts\)$/);
  });

  it('a Store deleted after the Session attached it is not mounted: the Session goes on without it', async () => {
    const t = await attachedStore({ '/a.md': 'alpha' });
    expect((await api.delete(`/v1/memory_stores/${t.store.id}`)).status).toBe(200);
    const warned: string[] = [];
    const sync = new MemorySync({
      client: new HttpMemoryApi({ baseUrl: url, token: t.token }),
      sessionId: t.sessionId,
      attachments: t.attachments,
      root: t.root,
      backoffBaseMs: 20,
      log: { info: () => undefined, warn: (_o, msg) => warned.push(msg), error: () => undefined },
    });
    expect(await sync.start()).toEqual([]);
    expect(warned).toEqual(['memory store no longer exists: not mounted']);
    expect(await readdir(t.root)).toEqual([]);
    expect((await sync.finalSync()).refused).toEqual([]);
    await sync.dispose();
  });

  it('concurrent remote and local edits: the remote version wins locally and the local edit is not uploaded', async () => {
    const t = await setup({ '/a.md': 'base', '/b.md': 'keep' });
    const id = await t.idOf('/a.md');
    expect(
      (await api.post(`/v1/memory_stores/${t.store.id}/memories/${id}`, { content: 'remote edit' })).status,
    ).toBe(200);
    await writeFile(t.file('/a.md'), 'local edit');
    const report = await t.sync.syncOnce();
    expect(report).toMatchObject({ pulled: 1, pushed: 0 });
    expect(await readFile(t.file('/a.md'), 'utf8')).toBe('remote edit');
    expect(await t.remote()).toEqual({ '/a.md': 'remote edit', '/b.md': 'keep' });
    // A remote delete also wins over a local edit.
    const b = await t.idOf('/b.md');
    await api.delete(`/v1/memory_stores/${t.store.id}/memories/${b}`);
    await writeFile(t.file('/b.md'), 'edited locally');
    expect(await t.sync.syncOnce()).toMatchObject({ removedLocally: 1, pushed: 0 });
    await expect(stat(t.file('/b.md'))).rejects.toThrow(/ENOENT/);
    expect(await t.remote()).toEqual({ '/a.md': 'remote edit' });
    await t.sync.dispose();
  });

  it.each(['http', 'sdk'] as const)(
    'a local delete seen once is not pushed; seen by a second pass it is (%s client)',
    async (via) => {
      const t = await setup({ '/gone.md': 'bye', '/stays.md': 'hi' }, 'read_write', 0, via);
      await unlink(t.file('/gone.md'));
      expect(await t.sync.syncOnce()).toMatchObject({ deleted: 0 });
      expect(Object.keys(await t.remote()).sort()).toEqual(['/gone.md', '/stays.md']);
      expect(await t.sync.syncOnce()).toMatchObject({ deleted: 1 });
      expect(await t.remote()).toEqual({ '/stays.md': 'hi' });
      const versions = await api.get(`/v1/memory_stores/${t.store.id}/memory_versions?operation=deleted`);
      expect(versions.body.data[0].created_by).toEqual({ type: 'session_actor', session_id: t.sessionId });
      // A file that comes back between the two observations is not deleted.
      await unlink(t.file('/stays.md'));
      await t.sync.syncOnce();
      await writeFile(t.file('/stays.md'), 'hi');
      await t.sync.syncOnce();
      await t.sync.syncOnce();
      expect(await t.remote()).toEqual({ '/stays.md': 'hi' });
      await t.sync.dispose();
    },
  );

  it('a tampered marker refuses every upload and deletion for that Store', async () => {
    const t = await setup({ '/a.md': 'alpha', '/b.md': 'beta' });
    await writeFile(join(t.dir, '.mango-memory-store'), 'version 1\nmemstore_someone_else\n', {
      mode: 0o600,
    }).catch(async () => {
      await rm(join(t.dir, '.mango-memory-store'), { force: true });
      await writeFile(join(t.dir, '.mango-memory-store'), 'version 1\nmemstore_someone_else\n');
    });
    await writeFile(t.file('/a.md'), 'tampered');
    await writeFile(t.file('/c.md'), 'new');
    await unlink(t.file('/b.md'));
    for (let i = 0; i < 3; i++)
      expect(await t.sync.syncOnce()).toMatchObject({ pushed: 0, deleted: 0, refused: [t.store.id] });
    expect(await t.sync.flush()).toMatchObject({ pushed: 0, refused: [t.store.id] });
    expect(await t.remote()).toEqual({ '/a.md': 'alpha', '/b.md': 'beta' });
    await t.sync.dispose();
  });

  it('never writes a pulled Memory through a directory a tool replaced with a symlink out of the root', async () => {
    const t = await setup({ '/ok.md': 'ok' });
    const outside = await mkdtemp(join(tmpdir(), 'mango-outside-'));
    dirs.push(outside);
    await symlink(outside, join(t.dir, 'evil'));
    expect(
      (await api.post(`/v1/memory_stores/${t.store.id}/memories`, { path: '/evil/x.md', content: 'x' }))
        .status,
    ).toBe(201);
    expect(
      (await api.post(`/v1/memory_stores/${t.store.id}/memories`, { path: '/later.md', content: 'l' }))
        .status,
    ).toBe(201);
    const report = await t.sync.syncOnce();
    expect(report.pulled).toBe(1);
    expect(await readdir(outside)).toEqual([]);
    expect(await readFile(t.file('/later.md'), 'utf8')).toBe('l');
    // The symlink itself is not a Memory and is never uploaded.
    expect(Object.keys(await t.remote()).sort()).toEqual(['/evil/x.md', '/later.md', '/ok.md']);
    await t.sync.dispose();
    expect(await readdir(outside)).toEqual([]);
  });

  it('read-only attachments are pulled but never pushed', async () => {
    const t = await setup({ '/ref.md': 'reference' }, 'read_only');
    expect(t.roots).toEqual([{ path: t.dir, readOnly: true }]);
    await writeFile(t.file('/ref.md'), 'scribbled');
    await writeFile(t.file('/extra.md'), 'extra');
    await t.sync.syncOnce();
    await t.sync.syncOnce();
    await t.sync.flush();
    expect(await t.remote()).toEqual({ '/ref.md': 'reference' });
    const id = await t.idOf('/ref.md');
    await api.post(`/v1/memory_stores/${t.store.id}/memories/${id}`, { content: 'reference v2' });
    expect(await t.sync.syncOnce()).toMatchObject({ pulled: 1 });
    expect(await readFile(t.file('/ref.md'), 'utf8')).toBe('reference v2');
    await t.sync.dispose();
  });

  it('flush pushes local creates and updates only: no pull, no delete; finalSync does both', async () => {
    const t = await setup({ '/a.md': 'a', '/b.md': 'b', '/c.md': 'c' });
    const b = await t.idOf('/b.md');
    await api.post(`/v1/memory_stores/${t.store.id}/memories/${b}`, { content: 'b remote' });
    await writeFile(t.file('/a.md'), 'a local');
    await writeFile(t.file('/d.md'), 'd local');
    await unlink(t.file('/c.md'));
    expect(await t.sync.flush(new Date(Date.now() + 30_000))).toMatchObject({
      pushed: 2,
      pulled: 0,
      deleted: 0,
    });
    expect(await t.remote()).toEqual({
      '/a.md': 'a local',
      '/b.md': 'b remote',
      '/c.md': 'c',
      '/d.md': 'd local',
    });
    expect(await readFile(t.file('/b.md'), 'utf8')).toBe('b'); // not pulled
    expect(await t.sync.flush()).toMatchObject({ pushed: 0, deleted: 0 });
    expect(Object.keys(await t.remote())).toContain('/c.md'); // never deleted by a flush

    expect(await t.sync.finalSync()).toMatchObject({ pulled: 1, deleted: 0 });
    expect(await readFile(t.file('/b.md'), 'utf8')).toBe('b remote');
    expect(await t.sync.finalSync()).toMatchObject({ deleted: 1 }); // the second observation of /c.md
    expect(await t.remote()).toEqual({ '/a.md': 'a local', '/b.md': 'b remote', '/d.md': 'd local' });
    await t.sync.dispose();
  });

  it('syncIfDue (after each tool call) runs a pass only once the cadence has elapsed since the last one', async () => {
    const t = await setup({ '/a.md': 'a' }, 'read_write', 3_600_000);
    await writeFile(t.file('/a.md'), 'edited');
    expect(await t.sync.syncIfDue()).toBeUndefined(); // mounted moments ago: not due
    expect(await t.remote()).toEqual({ '/a.md': 'a' });
    expect(await t.sync.syncOnce()).toMatchObject({ pushed: 1 });
    expect(await t.remote()).toEqual({ '/a.md': 'edited' });
    await t.sync.dispose();
  });

  it.each(['http', 'sdk'] as const)(
    'a stale precondition is refused by the server and the next pass pulls (%s client)',
    async (via) => {
      const t = await setup({ '/a.md': 'one' }, 'read_write', 0, via);
      await writeFile(t.file('/a.md'), 'local two');
      const id = await t.idOf('/a.md');
      await api.post(`/v1/memory_stores/${t.store.id}/memories/${id}`, { content: 'remote two' });
      // The push-only flush cannot see the remote change: its update carries the old digest and is refused.
      expect(await t.sync.flush()).toMatchObject({ pushed: 0 });
      const m = await api.get(`/v1/memory_stores/${t.store.id}/memories/${id}`);
      expect(m.body).toMatchObject({ content: 'remote two', content_sha256: sha('remote two') });
      expect(await t.sync.syncOnce()).toMatchObject({ pulled: 1 });
      expect(await readFile(t.file('/a.md'), 'utf8')).toBe('remote two');
      await t.sync.dispose();
    },
  );
});
