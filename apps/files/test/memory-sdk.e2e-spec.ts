import { createHash } from 'node:crypto';
import {
  ConflictError,
  MangoClient,
  Memory,
  MemoryPrefix,
  NotFoundError,
  RequestTooLargeError,
} from '@mango/sdk';
import { FilesUnderTest, startFiles } from './support';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The SDK's `memoryStores` layer against a real apps/files process. */
describe('SDK memoryStores (real apps/files process)', () => {
  let files: FilesUnderTest;
  let mango: MangoClient;
  beforeAll(async () => {
    files = await startFiles('memorysdk', { MANGO_MEMORY_MAX_CONTENT_BYTES: '64' });
    mango = new MangoClient({ baseUrl: files.url, apiKey: (await files.issueKey('wrkspc_default')).api_key });
  });
  afterAll(() => files.close());

  it('covers stores, memories, listing, versions and typed errors', async () => {
    const store = await mango.memoryStores.create({ name: 'sdk', metadata: { k: 'v' } });
    expect(await mango.memoryStores.retrieve(store.id)).toEqual(store);
    expect((await mango.memoryStores.update(store.id, { description: 'd' })).description).toBe('d');
    const ids: string[] = [];
    for await (const s of mango.memoryStores.list({ limit: 1, created_at: { gte: store.created_at } }))
      ids.push(s.id);
    expect(ids).toEqual([store.id]);

    const m = await mango.memoryStores.memories.create(
      store.id,
      { path: '/a/b.md', content: 'one' },
      { view: 'full' },
    );
    expect(m).toMatchObject({ path: '/a/b.md', content: 'one', content_sha256: sha('one') });
    await mango.memoryStores.memories.create(store.id, { path: '/c.md', content: 'c' });
    const err = await mango.memoryStores.memories
      .update(store.id, m.id, {
        content: 'two',
        precondition: { type: 'content_sha256', content_sha256: sha('x') },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({
      status: 409,
      type: 'memory_precondition_failed_error',
      details: { content_sha256: sha('one') },
    });
    await expect(
      mango.memoryStores.memories.create(store.id, { path: '/big', content: 'x'.repeat(65) }),
    ).rejects.toBeInstanceOf(RequestTooLargeError);
    const two = await mango.memoryStores.memories.update(store.id, m.id, {
      content: 'two',
      precondition: { type: 'content_sha256', content_sha256: sha('one') },
    });
    expect((await mango.memoryStores.memories.retrieve(store.id, m.id)).content).toBe('two');

    const entries: Array<Memory | MemoryPrefix> = [];
    for await (const e of mango.memoryStores.memories.list(store.id, { depth: 1, limit: 1 })) entries.push(e);
    expect(entries.map((e) => [e.type, e.path])).toEqual([
      ['memory_prefix', '/a/'],
      ['memory', '/c.md'],
    ]);

    const versions = await mango.memoryStores.versions.list(store.id, { memory_id: m.id });
    expect(versions.data.map((v) => v.operation)).toEqual(['modified', 'created']);
    const redacted = await mango.memoryStores.versions.redact(store.id, m.memory_version_id);
    expect(redacted).toMatchObject({ content_sha256: null, path: null });
    expect((await mango.memoryStores.versions.retrieve(store.id, two.memory_version_id)).content).toBe('two');

    expect(
      await mango.memoryStores.memories.delete(store.id, m.id, { expected_content_sha256: sha('two') }),
    ).toEqual({
      id: m.id,
      type: 'memory_deleted',
    });
    expect((await mango.memoryStores.archive(store.id)).archived_at).not.toBeNull();
    expect(await mango.memoryStores.delete(store.id)).toEqual({ id: store.id, type: 'memory_store_deleted' });
    await expect(mango.memoryStores.retrieve(store.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
