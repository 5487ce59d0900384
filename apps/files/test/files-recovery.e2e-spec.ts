import { createHash, randomBytes } from 'node:crypto';
import { newId } from '@mango/platform-ids';
import {
  download,
  filePart,
  FilesUnderTest,
  MIB,
  multipart,
  rawPost,
  split,
  startFiles,
  waitFor,
} from './support';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Upload recovery across real apps/files processes sharing one database and one bucket. Process A
 * (the one uploading) never sweeps; process B sweeps every 100 ms with no grace, so B removes an
 * abandoned upload's object as soon as its lease runs out — and must never remove a live one.
 */
describe('Files recovery across processes (real apps/files processes, PostgreSQL, S3)', () => {
  const LEASE_MS = 1000;
  let files: FilesUnderTest;
  let key: string;
  beforeAll(async () => {
    files = await startFiles('filesrecovery', {
      MANGO_FILES_PART_BYTES: String(5 * MIB),
      MANGO_FILES_UPLOAD_LEASE_MS: String(LEASE_MS),
      MANGO_FILES_SWEEP_INTERVAL_MS: '0',
    });
    key = (await files.issueKey('wrkspc_default')).api_key;
  });
  afterAll(() => files.close());

  const uploadIntents = () =>
    files.sql<{ object_key: string; lease_owner: string; lease_expires_at: Date }>(
      "SELECT object_key, lease_owner, lease_expires_at FROM object_cleanups WHERE reason = 'upload'",
    );

  it('a process killed mid-upload leaves only a cleanup intent; another process sweeps the partial object', async () => {
    const victim = await files.startProcess();
    const f = multipart([filePart(randomBytes(8 * MIB), 'doomed.bin')]);
    const pieces = split(f.body, 128); // 64 KiB each: 5 MiB + framing is sent by piece 81
    let killed: Promise<number | null> | undefined;
    const sending = rawPost(victim.url, key, f.contentType, pieces, {
      onSent: async (i) => {
        if (i !== 90) return;
        // The first 5 MiB part has reached the object store as an unfinished multipart upload.
        await waitFor(async () => (await files.incompleteUploads()).length === 1, 15_000, 'a stored part');
        killed = victim.app.stop('SIGKILL');
      },
    });
    await expect(sending).rejects.toThrow(/socket hang up|ECONNRESET|EPIPE/);
    expect(await killed).toBeNull(); // killed by the signal, no exit code

    const [intent] = await uploadIntents();
    expect(intent?.object_key).toMatch(/^workspaces\/wrkspc_default\/files\/file_/);
    expect(await files.incompleteUploads()).toEqual([intent!.object_key]);
    expect((await files.stored()).files).toBe(0);

    const sweeper = await files.startProcess({
      MANGO_FILES_SWEEP_INTERVAL_MS: '100',
      MANGO_FILES_SWEEP_GRACE_MS: '0',
    });
    await waitFor(async () => (await files.stored()).cleanups === 0, 15_000, 'the sweeper');
    expect(await files.stored()).toEqual({ files: 0, cleanups: 0, objects: [], incomplete: [] });
    await sweeper.app.stop();
  });

  it('fences live uploads: a slow upload on A outlives its lease many times over while B sweeps with no grace, and the File is usable', async () => {
    const a = await files.startProcess();
    const b = await files.startProcess({
      MANGO_FILES_SWEEP_INTERVAL_MS: '100',
      MANGO_FILES_SWEEP_GRACE_MS: '0',
    });
    // A dead upload's leftovers, to show that B's sweeper is really removing expired intents meanwhile.
    const deadKey = `workspaces/wrkspc_default/files/${newId('file')}`;
    await files.store.client.putObject(files.store.bucket, deadKey, Buffer.from('orphan'));

    const bytes = randomBytes(6 * MIB);
    const f = multipart([filePart(bytes, 'slow.bin')]);
    const pieces = split(f.body, 30);
    const leases: number[] = [];
    const started = Date.now();
    const res = await rawPost(a.url, key, f.contentType, pieces, {
      delayMs: 200, // ~6 s in all: six leases
      onSent: async (i) => {
        const [intent] = await uploadIntents();
        if (intent) leases.push(new Date(intent.lease_expires_at).getTime());
        if (i === 2)
          await files.sql(
            `INSERT INTO object_cleanups (id, object_key, reason, lease_owner, lease_expires_at)
             VALUES (gen_random_uuid(), $1, 'upload', 'dead-process', now() - interval '1 second')`,
            [deadKey],
          );
        if (i === 15) expect(await files.objectKeys()).not.toContain(deadKey);
      },
    });
    expect(Date.now() - started).toBeGreaterThan(5 * LEASE_MS);
    expect(res.status).toBe(201);
    expect(res.body.size_bytes).toBe(bytes.length);
    // A kept renewing: its lease moved forward all through the upload.
    expect(leases.length).toBeGreaterThan(20);
    expect(leases[leases.length - 1]! - leases[0]!).toBeGreaterThan(3 * LEASE_MS);

    // The File is whole and readable through the other process; nothing is left to clean.
    const got = await download(b.url, key, res.body.id);
    expect(sha(got.bytes)).toBe(sha(bytes));
    expect(await files.stored()).toEqual({
      files: 1,
      cleanups: 0,
      objects: [`workspaces/wrkspc_default/files/${res.body.id}`],
      incomplete: [],
    });
    await Promise.all([a.app.stop(), b.app.stop()]);
  });
});
