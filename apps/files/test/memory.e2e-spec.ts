import { createHash } from 'node:crypto';
import { httpClient } from '@mango/testing';
import { Client, memoryFixtures } from './memory-support';
import { FilesUnderTest, startFiles } from './support';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Memory Stores on a real apps/files process, PostgreSQL and S3; every response checked against openapi.yaml. */
describe('Memory Stores (real apps/files process)', () => {
  let files: FilesUnderTest;
  let api: Client;
  let keyId: string;
  let fx: ReturnType<typeof memoryFixtures>;
  beforeAll(async () => {
    files = await startFiles('memory', { MANGO_MEMORY_MAX_CONTENT_BYTES: '1000' });
    const key = await files.issueKey('wrkspc_default');
    keyId = key.id;
    api = httpClient(files.url, key.api_key);
    fx = memoryFixtures(files);
  });
  afterAll(() => files.close());

  const newStore = async (name = 'Team Notes') => {
    const res = await api.post('/v1/memory_stores', { name, description: 'notes', metadata: { a: '1' } });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };
  const mem = (storeId: string) => `/v1/memory_stores/${storeId}/memories`;

  it('creates, reads, updates, lists, archives and deletes Stores', async () => {
    const store = await newStore();
    expect(store).toMatchObject({
      type: 'memory_store',
      name: 'Team Notes',
      description: 'notes',
      archived_at: null,
    });
    expect((await api.get(`/v1/memory_stores/${store.id}`)).body).toEqual(store);
    const upd = await api.post(`/v1/memory_stores/${store.id}`, {
      description: '',
      metadata: { a: null, b: '2' },
    });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ description: '', metadata: { b: '2' }, name: 'Team Notes' });
    const other = await newStore('Second');
    const list = await api.get('/v1/memory_stores?limit=1');
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([other.id]);
    const next = await api.get(`/v1/memory_stores?limit=1&page=${list.body.next_page}`);
    expect(next.body.data[0].id).toBe(store.id);

    const archived = await api.post(`/v1/memory_stores/${store.id}/archive`);
    expect(archived.body.archived_at).not.toBeNull();
    expect((await api.post(`/v1/memory_stores/${store.id}/archive`)).body).toEqual(archived.body);
    expect((await api.post(`/v1/memory_stores/${store.id}`, { name: 'x' })).status).toBe(409);
    expect((await api.post(mem(store.id), { path: '/a', content: 'x' })).status).toBe(409);
    const ids = (await api.get('/v1/memory_stores')).body.data.map((s: { id: string }) => s.id);
    expect(ids).not.toContain(store.id);
    expect(
      (await api.get('/v1/memory_stores?include_archived=true')).body.data.map((s: { id: string }) => s.id),
    ).toContain(store.id);

    const withContent = await newStore('Doomed');
    await api.post(mem(withContent.id), { path: '/x.md', content: 'one' });
    const before = (await files.objectKeys()).filter((k) => k.includes(withContent.id));
    expect(before).toHaveLength(1);
    expect((await api.delete(`/v1/memory_stores/${withContent.id}`)).body).toEqual({
      id: withContent.id,
      type: 'memory_store_deleted',
    });
    expect((await api.get(`/v1/memory_stores/${withContent.id}`)).status).toBe(404);
    expect((await files.objectKeys()).filter((k) => k.includes(withContent.id))).toEqual([]);
    expect(
      await files.sql('SELECT 1 FROM memory_versions WHERE memory_store_id = $1', [withContent.id]),
    ).toEqual([]);
  });

  it('Stores announce created, archived and deleted to subscribed webhooks in the same transaction (no event for updates)', async () => {
    const hook = 'webhook_01JD2Y3QX9V5M8K7R6T4W2P0AB';
    await files.sql(
      `INSERT INTO webhooks (id, workspace_id, url, event_types, description, metadata, secrets, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', 'https://hooks.example.com/m', $2, null, '{}', '[]', now(), now())`,
      [hook, ['memory_store.created', 'memory_store.archived', 'memory_store.deleted']],
    );
    const since = new Date().toISOString();
    const store = await newStore('Announced');
    await api.post(`/v1/memory_stores/${store.id}`, { description: 'changed' });
    await api.post(`/v1/memory_stores/${store.id}/archive`);
    await api.delete(`/v1/memory_stores/${store.id}`);
    const rows = await files.sql<{ type: string; data: { id: string } }>(
      'SELECT type, data FROM webhook_events WHERE created_at >= $1 ORDER BY id',
      [since],
    );
    expect(rows.map((r) => [r.type, r.data.id])).toEqual([
      ['memory_store.created', store.id],
      ['memory_store.archived', store.id],
      ['memory_store.deleted', store.id],
    ]);
    await files.sql('DELETE FROM webhooks WHERE id = $1', [hook]);
  });

  it('stores Memories with content in S3, digests, preconditions, renames and deletes, with a version history', async () => {
    const store = await newStore();
    const created = await api.post(mem(store.id), { path: '/prefs/editor.md', content: 'tabs' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'memory',
      path: '/prefs/editor.md',
      content: null,
      content_sha256: sha('tabs'),
      content_size_bytes: 4,
    });
    const id = created.body.id;
    const full = await api.get(`${mem(store.id)}/${id}`);
    expect(full.body.content).toBe('tabs');
    expect((await api.get(`${mem(store.id)}/${id}?view=basic`)).body.content).toBeNull();

    // A wrong precondition changes nothing.
    const stale = await api.post(`${mem(store.id)}/${id}`, {
      content: 'spaces',
      precondition: { type: 'content_sha256', content_sha256: sha('other') },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({
      type: 'memory_precondition_failed_error',
      details: { content_sha256: sha('tabs') },
    });
    expect((await api.get(`${mem(store.id)}/${id}`)).body.content).toBe('tabs');

    const updated = await api.post(`${mem(store.id)}/${id}?view=full`, {
      content: 'spaces',
      precondition: { type: 'content_sha256', content_sha256: sha('tabs') },
    });
    expect(updated.body).toMatchObject({ id, content: 'spaces', content_sha256: sha('spaces') });
    expect(updated.body.memory_version_id).not.toBe(created.body.memory_version_id);
    // The same change again (a retry after a lost response): 200, no new version, precondition ignored.
    const retry = await api.post(`${mem(store.id)}/${id}`, {
      content: 'spaces',
      precondition: { type: 'content_sha256', content_sha256: sha('tabs') },
    });
    expect(retry.status).toBe(200);
    expect(retry.body.memory_version_id).toBe(updated.body.memory_version_id);

    const renamed = await api.post(`${mem(store.id)}/${id}`, { path: '/prefs/ide.md' });
    expect(renamed.body).toMatchObject({ id, path: '/prefs/ide.md', content_sha256: sha('spaces') });

    const wrongDelete = await api.delete(`${mem(store.id)}/${id}?expected_content_sha256=${sha('tabs')}`);
    expect(wrongDelete.status).toBe(409);
    expect(wrongDelete.body.error.type).toBe('memory_precondition_failed_error');
    const deleted = await api.delete(`${mem(store.id)}/${id}?expected_content_sha256=${sha('spaces')}`);
    expect(deleted.body).toEqual({ id, type: 'memory_deleted' });
    expect((await api.get(`${mem(store.id)}/${id}`)).status).toBe(404);

    const versions = await api.get(`/v1/memory_stores/${store.id}/memory_versions?memory_id=${id}&view=full`);
    expect(versions.body.data.map((v: { operation: string }) => v.operation)).toEqual([
      'deleted',
      'modified',
      'modified',
      'created',
    ]);
    expect(versions.body.data.map((v: { path: string }) => v.path)).toEqual([
      '/prefs/ide.md',
      '/prefs/ide.md',
      '/prefs/editor.md',
      '/prefs/editor.md',
    ]);
    expect(versions.body.data.map((v: { content: string | null }) => v.content)).toEqual([
      null,
      'spaces',
      'spaces',
      'tabs',
    ]);
    for (const v of versions.body.data)
      expect(v.created_by).toEqual({ type: 'api_actor', api_key_id: keyId });
    const byKey = await api.get(
      `/v1/memory_stores/${store.id}/memory_versions?api_key_id=${keyId}&operation=created`,
    );
    expect(byKey.body.data).toHaveLength(1);
    expect(
      (await api.get(`/v1/memory_stores/${store.id}/memory_versions?session_id=sesn_x`)).body.data,
    ).toEqual([]);
  });

  it('refuses overlapping paths with memory_path_conflict_error', async () => {
    const store = await newStore();
    const a = (await api.post(mem(store.id), { path: '/a/b', content: '' })).body;
    const c = (await api.post(mem(store.id), { path: '/c', content: 'c' })).body;
    for (const path of ['/a/b', '/a', '/a/b/c']) {
      const res = await api.post(mem(store.id), { path, content: 'x' });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({
        type: 'memory_path_conflict_error',
        details: { conflicting_memory_id: a.id, conflicting_path: '/a/b' },
      });
    }
    const rename = await api.post(`${mem(store.id)}/${c.id}`, { path: '/a/b/d' });
    expect(rename.status).toBe(409);
    expect(rename.body.error.type).toBe('memory_path_conflict_error');
    expect((await api.get(`${mem(store.id)}/${c.id}`)).body.path).toBe('/c');
    // Siblings whose names share a prefix do not conflict.
    expect((await api.post(mem(store.id), { path: '/a/bb', content: '' })).status).toBe(201);
  });

  it('concurrent writers: one create wins a path, conflicting precondition updates apply once, no orphaned objects', async () => {
    const store = await newStore();
    const creates = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api.post(mem(store.id), { path: '/race', content: `writer ${i}` })),
    );
    expect(creates.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = creates.find((r) => r.status === 201)!.body;
    const updates = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post(`${mem(store.id)}/${winner.id}`, {
          content: `update ${i}`,
          precondition: { type: 'content_sha256', content_sha256: winner.content_sha256 },
        }),
      ),
    );
    expect(updates.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const applied = updates.find((r) => r.status === 200)!.body;
    expect((await api.get(`${mem(store.id)}/${winner.id}`)).body.content_sha256).toBe(applied.content_sha256);
    // Exactly the two committed versions have objects; refused writers removed theirs.
    const objects = (await files.objectKeys()).filter((k) => k.includes(store.id));
    expect(objects.sort()).toEqual(
      [winner.memory_version_id, applied.memory_version_id]
        .map((v: string) => `workspaces/wrkspc_default/memory_stores/${store.id}/versions/${v}`)
        .sort(),
    );
    expect((await fx.memoryState()).cleanups).toBe(0);
  });

  it('lists by path_prefix and depth with memory_prefix rollups, paging by path', async () => {
    const store = await newStore();
    for (const p of ['/x/1', '/x/y/2', '/x/y/z/3', '/x/w/4', '/top', '/xx/5'])
      expect((await api.post(mem(store.id), { path: p, content: p })).status).toBe(201);
    const paths = async (q: string) =>
      (await api.get(`${mem(store.id)}?${q}`)).body.data.map((e: { type: string; path: string }) =>
        e.type === 'memory_prefix' ? `${e.path}*` : e.path,
      );
    expect(await paths('')).toEqual(['/top', '/x/1', '/x/w/4', '/x/y/2', '/x/y/z/3', '/xx/5']);
    expect(await paths('path_prefix=/x/')).toEqual(['/x/1', '/x/w/4', '/x/y/2', '/x/y/z/3']);
    expect(await paths('path_prefix=/x/&depth=1')).toEqual(['/x/1', '/x/w/*', '/x/y/*']);
    expect(await paths('depth=1')).toEqual(['/top', '/x/*', '/xx/*']);
    expect(await paths('path_prefix=/x/&depth=2')).toEqual(['/x/1', '/x/w/4', '/x/y/2', '/x/y/z/*']);
    const full = await api.get(`${mem(store.id)}?path_prefix=/x/y/&view=full`);
    expect(full.body.data.map((m: { content: string }) => m.content)).toEqual(['/x/y/2', '/x/y/z/3']);

    const seen: string[] = [];
    let page: string | null = null;
    do {
      const res: { body: { data: Array<{ path: string }>; next_page: string | null } } = await api.get(
        `${mem(store.id)}?limit=2&depth=1${page ? `&page=${page}` : ''}`,
      );
      seen.push(...res.body.data.map((e) => e.path));
      page = res.body.next_page;
    } while (page);
    expect(seen).toEqual(['/top', '/x/', '/xx/']);
    const first = await api.get(`${mem(store.id)}?limit=1`);
    expect((await api.get(`${mem(store.id)}?limit=1&depth=1&page=${first.body.next_page}`)).status).toBe(400);
    expect((await api.get(`${mem(store.id)}?path_prefix=/x`)).status).toBe(400);
    expect((await api.get(`${mem(store.id)}?view=full&limit=21`)).status).toBe(400);
  });

  it('redacts old versions (and removes their object), never the current one', async () => {
    const store = await newStore();
    const m = (await api.post(mem(store.id), { path: '/secret', content: 'password=hunter2' })).body;
    const first = m.memory_version_id;
    const current = (await api.post(`${mem(store.id)}/${m.id}`, { content: 'nothing to see' })).body
      .memory_version_id;
    const objectsBefore = (await files.objectKeys()).filter((k) => k.includes(store.id));
    expect(objectsBefore).toHaveLength(2);

    const refused = await api.post(`/v1/memory_stores/${store.id}/memory_versions/${current}/redact`);
    expect(refused.status).toBe(409);
    const red = await api.post(`/v1/memory_stores/${store.id}/memory_versions/${first}/redact`);
    expect(red.status).toBe(200);
    expect(red.body).toMatchObject({
      id: first,
      operation: 'created',
      path: null,
      content: null,
      content_sha256: null,
      content_size_bytes: null,
      created_by: { type: 'api_actor', api_key_id: keyId },
      redacted_by: { type: 'api_actor', api_key_id: keyId },
    });
    expect(red.body.redacted_at).not.toBeNull();
    const again = await api.get(`/v1/memory_stores/${store.id}/memory_versions/${first}`);
    expect(again.body).toEqual(red.body);
    expect((await files.objectKeys()).filter((k) => k.includes(store.id))).toEqual(
      objectsBefore.filter((k) => !k.endsWith(first)),
    );
    expect((await api.get(`${mem(store.id)}/${m.id}`)).body.content).toBe('nothing to see');
    expect((await api.post(`/v1/memory_stores/${store.id}/memory_versions/${first}/redact`)).body).toEqual(
      red.body,
    );
  });

  it('isolates Workspaces: another Workspace sees 404 and changes nothing', async () => {
    const store = await newStore();
    const m = (await api.post(mem(store.id), { path: '/mine', content: 'mine' })).body;
    const ws = await files.createWorkspace();
    const other = httpClient(files.url, (await files.issueKey(ws)).api_key);
    const before = await fx.memoryState();
    const attempts = [
      () => other.get(`/v1/memory_stores/${store.id}`),
      () => other.post(`/v1/memory_stores/${store.id}`, { name: 'stolen' }),
      () => other.post(`/v1/memory_stores/${store.id}/archive`),
      () => other.get(mem(store.id)),
      () => other.get(`${mem(store.id)}/${m.id}`),
      () => other.post(mem(store.id), { path: '/theirs', content: 'x' }),
      () => other.post(`${mem(store.id)}/${m.id}`, { content: 'overwritten' }),
      () => other.delete(`${mem(store.id)}/${m.id}`),
      () => other.get(`/v1/memory_stores/${store.id}/memory_versions`),
      () => other.post(`/v1/memory_stores/${store.id}/memory_versions/${m.memory_version_id}/redact`),
      () => other.delete(`/v1/memory_stores/${store.id}`),
    ];
    for (const attempt of attempts) expect((await attempt()).status).toBe(404);
    expect((await other.get('/v1/memory_stores')).body.data).toEqual([]);
    expect(await fx.memoryState()).toEqual(before);
    expect((await api.get(`${mem(store.id)}/${m.id}`)).body).toMatchObject({
      content: 'mine',
      path: '/mine',
    });
  });

  describe('bad input: documented status, nothing stored, no orphaned object', () => {
    let storeId: string;
    let memoryId: string;
    beforeAll(async () => {
      storeId = (await newStore()).id;
      memoryId = (await api.post(mem(storeId), { path: '/keep', content: 'keep' })).body.id;
    });
    const cases: Array<[string, () => [string, string, unknown], number, string | RegExp]> = [
      [
        'a traversal path',
        () => ['POST', mem(storeId), { path: '/a/../../etc', content: 'x' }],
        400,
        /"\." or "\.\."/,
      ],
      [
        'a relative path',
        () => ['POST', mem(storeId), { path: 'etc/passwd', content: 'x' }],
        400,
        /start with/,
      ],
      [
        'an empty segment',
        () => ['POST', mem(storeId), { path: '/a//b', content: 'x' }],
        400,
        /empty segments/,
      ],
      [
        'a control character',
        () => ['POST', mem(storeId), { path: '/a\u0000', content: 'x' }],
        400,
        /control/,
      ],
      [
        'oversize content',
        () => ['POST', mem(storeId), { path: '/big', content: 'x'.repeat(1001) }],
        413,
        /at most 1000 bytes/,
      ],
      [
        'multi-byte oversize content',
        () => ['POST', mem(storeId), { path: '/big', content: 'é'.repeat(501) }],
        413,
        /1000 bytes/,
      ],
      ['missing content', () => ['POST', mem(storeId), { path: '/a' }], 400, /content is required/],
      ['non-string content', () => ['POST', mem(storeId), { path: '/a', content: 42 }], 400, /string/],
      [
        'an unknown field',
        () => ['POST', mem(storeId), { path: '/a', content: 'x', mode: 1 }],
        400,
        /unknown field/,
      ],
      [
        'a wrong precondition',
        () => [
          'POST',
          `${mem(storeId)}/${memoryId}`,
          { content: 'new', precondition: { type: 'content_sha256', content_sha256: sha('nope') } },
        ],
        409,
        /expected content_sha256/,
      ],
      [
        'a malformed precondition',
        () => [
          'POST',
          `${mem(storeId)}/${memoryId}`,
          { content: 'new', precondition: { type: 'content_sha256', content_sha256: 'ABC' } },
        ],
        400,
        /hex/,
      ],
      [
        'a traversal rename',
        () => ['POST', `${mem(storeId)}/${memoryId}`, { path: '/../x' }],
        400,
        /"\." or "\.\."/,
      ],
      [
        'an oversize update',
        () => ['POST', `${mem(storeId)}/${memoryId}`, { content: 'x'.repeat(1001) }],
        413,
        /1000 bytes/,
      ],
      ['an empty update', () => ['POST', `${mem(storeId)}/${memoryId}`, {}], 400, /content and\/or path/],
      [
        'a wrong expected sha on delete',
        () => ['DELETE', `${mem(storeId)}/${memoryId}?expected_content_sha256=${sha('nope')}`, undefined],
        409,
        /expected content_sha256/,
      ],
      [
        'a malformed expected sha',
        () => ['DELETE', `${mem(storeId)}/${memoryId}?expected_content_sha256=zz`, undefined],
        400,
        /hex/,
      ],
      [
        'a memory id of another prefix',
        () => ['POST', `${mem(storeId)}/file_01JD2Y3QX9V5M8K7R6T4W2P0AB`, { content: 'x' }],
        404,
        /not found/,
      ],
      [
        'an unknown store',
        () => ['POST', mem('memstore_01JD2Y3QX9V5M8K7R6T4W2P0AB'), { path: '/a', content: 'x' }],
        404,
        /not found/,
      ],
      ['a store name with a newline', () => ['POST', '/v1/memory_stores', { name: 'a\nb' }], 400, /control/],
      ['an empty store name', () => ['POST', '/v1/memory_stores', { name: '' }], 400, /empty/],
    ];
    it.each(cases)('%s', async (_name, build, status, message) => {
      const before = await fx.memoryState();
      const [stores] = await files.sql<{ n: number }>('SELECT count(*)::int AS n FROM memory_stores');
      const [method, path, body] = build();
      const res = await api.request(method, path, body);
      expect(res.status).toBe(status);
      expect(res.body.error.message).toMatch(message);
      expect(await fx.memoryState()).toEqual(before);
      expect((await files.sql<{ n: number }>('SELECT count(*)::int AS n FROM memory_stores'))[0]).toEqual(
        stores,
      );
      expect((await api.get(`${mem(storeId)}/${memoryId}`)).body).toMatchObject({
        path: '/keep',
        content: 'keep',
      });
    });
  });
});
