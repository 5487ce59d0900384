import { httpClient } from '@mango/testing';
import { newId } from '@mango/platform-ids';
import { memoryFixtures } from './memory-support';
import { FilesUnderTest, startFiles, waitFor } from './support';

/**
 * Memory writes on one apps/files process while another sweeps cleanup intents with no grace: live
 * writes are never swept (their intents are leased and committed away with the row), and an abandoned
 * write's object (a process that died between object write and commit) is removed by the other process.
 */
describe('Memory across apps/files processes (real PostgreSQL, S3)', () => {
  let files: FilesUnderTest;
  beforeAll(async () => {
    files = await startFiles('memoryprocs', {
      MANGO_FILES_UPLOAD_LEASE_MS: '1000',
      MANGO_FILES_SWEEP_INTERVAL_MS: '0',
    });
  });
  afterAll(() => files.close());

  it('a sweeping process never removes live writes and removes a dead writer’s object', async () => {
    const key = (await files.issueKey('wrkspc_default')).api_key;
    const sweeper = await files.startProcess({
      MANGO_FILES_SWEEP_INTERVAL_MS: '100',
      MANGO_FILES_SWEEP_GRACE_MS: '0',
    });
    const a = httpClient(files.url, key);
    const b = httpClient(sweeper.url, key);
    const store = (await a.post('/v1/memory_stores', { name: 'busy' })).body.id;
    // A writer that stalls past its 1 s lease (a loaded machine) loses it to the sweeper and answers 503
    // `dependency_unavailable`, committing nothing: the client sends it again after `retry-after`, as the
    // SDKs do. The counts below hold either way.
    let lost = 0;
    const write = async (path: string, body: unknown) => {
      for (let attempt = 1; ; attempt++) {
        const res = await a.post(path, body);
        if (res.status !== 503 || attempt === 5) return res;
        expect(res.body.error.details).toEqual({ error_code: 'dependency_unavailable' });
        lost++;
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 1000));
      }
    };

    // What a writer killed between its object write and its commit leaves behind.
    const deadKey = `workspaces/wrkspc_default/memory_stores/${store}/versions/${newId('memoryVersion')}`;
    await files.store.client.putObject(files.store.bucket, deadKey, Buffer.from('half-written'));
    await files.sql(
      `INSERT INTO object_cleanups (id, object_key, reason, lease_owner, lease_expires_at)
       VALUES (gen_random_uuid(), $1, 'upload', 'dead-process', now() - interval '1 second')`,
      [deadKey],
    );

    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          write(`/v1/memory_stores/${store}/memories`, {
            path: `/r${round}/m${i}`,
            content: `v0 ${round}.${i}`,
          }),
        ),
      );
      for (const c of created) {
        expect(c.status).toBe(201);
        ids.push(c.body.id);
      }
      const updated = await Promise.all(
        ids.map((id) =>
          write(`/v1/memory_stores/${store}/memories/${id}`, { content: `v${round + 1} ${id}` }),
        ),
      );
      for (const u of updated) expect(u.status).toBe(200);
    }
    await waitFor(
      async () => !(await files.objectKeys()).includes(deadKey),
      15_000,
      'the dead write to be swept',
    );

    // Every Memory reads back whole through the other process; only committed versions have objects.
    for (const id of ids)
      expect((await b.get(`/v1/memory_stores/${store}/memories/${id}`)).body.content).toBe(`v3 ${id}`);
    const versions = await files.sql<{ object_key: string }>(
      'SELECT object_key FROM memory_versions WHERE memory_store_id = $1 ORDER BY object_key',
      [store],
    );
    expect(versions).toHaveLength(24 + 8 + 16 + 24); // 24 creates, then 8, 16 and 24 updates
    const objects = (await files.objectKeys()).filter((k) => k.includes(store));
    expect(objects).toEqual(versions.map((v) => v.object_key).sort());
    expect((await memoryFixtures(files).memoryState()).cleanups).toBe(0);
    if (lost) console.log(`${lost} write(s) lost their lease to the sweeper and were sent again`);
    await sweeper.app.stop();
  });

  it('a write that waits longer than its lease (a busy Store) keeps its object and commits', async () => {
    const key = (await files.issueKey('wrkspc_default')).api_key;
    const sweeper = await files.startProcess({
      MANGO_FILES_SWEEP_INTERVAL_MS: '100',
      MANGO_FILES_SWEEP_GRACE_MS: '0',
    });
    const a = httpClient(files.url, key);
    const store = (await a.post('/v1/memory_stores', { name: 'locked' })).body.id;
    const memory = (await a.post(`/v1/memory_stores/${store}/memories`, { path: '/m', content: 'v0' })).body;

    // Another writer holds the Store row for three lease periods while this update waits for it.
    const runner = files.ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query('SELECT id FROM memory_stores WHERE id = $1 FOR UPDATE', [store]);
    const pending = a.post(`/v1/memory_stores/${store}/memories/${memory.id}`, { content: 'v1 waited' });
    await new Promise((r) => setTimeout(r, 3_000));
    await runner.commitTransaction();
    await runner.release();

    const updated = await pending;
    expect(updated.status).toBe(200);
    const b = httpClient(sweeper.url, key);
    expect((await b.get(`/v1/memory_stores/${store}/memories/${memory.id}`)).body.content).toBe('v1 waited');
    await new Promise((r) => setTimeout(r, 500)); // sweeps run every 100 ms: none may take the object
    expect((await b.get(`/v1/memory_stores/${store}/memories/${memory.id}`)).body.content).toBe('v1 waited');
    expect((await memoryFixtures(files).memoryState()).cleanups).toBe(0);
    await sweeper.app.stop();
  });
});
