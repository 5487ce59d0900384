import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { createDataSource } from '@mango/persistence';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { DeleteFile } from './delete-file.usecase';
import { FileObjects } from './file-objects';
import { DEFAULT_FILES_SETTINGS, FilesSettings, MIB } from './files.settings';
import { LeaseLostError } from './cleanup-lease-keeper';
import { ObjectCleanupRepository } from './object-cleanup.repository';
import { ObjectCleanupSweeper } from './object-cleanup.sweeper';
import { UploadFile } from './upload-file.usecase';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const WS = 'wrkspc_default';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Yields `pieces` with a pause before each: a client that uploads slowly. */
async function* slowly(pieces: Buffer[], delayMs: number): AsyncGenerator<Buffer> {
  for (const p of pieces) {
    await sleep(delayMs);
    yield p;
  }
}

describe('File upload and delete recovery (real PostgreSQL + S3, service steps)', () => {
  const settings: FilesSettings = {
    ...DEFAULT_FILES_SETTINGS,
    maxBytes: 64 * MIB,
    partBytes: 5 * MIB,
    leaseMs: 300,
    sweepGraceMs: 0,
    sweepIntervalMs: 0,
  };
  let db: TestDatabase;
  let ds: DataSource;
  let store: ObjectStore;
  let cleanups: ObjectCleanupRepository;
  let objects: FileObjects;
  let uploads: UploadFile;
  let deletes: DeleteFile;
  let sweeper: ObjectCleanupSweeper;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await createTestDatabase('filesrecovery');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket: `mango-recovery-${randomBytes(3).toString('hex')}`,
    });
    await store.ensureBucket();
    cleanups = new ObjectCleanupRepository(ds);
    objects = new FileObjects(store, settings);
    uploads = new UploadFile(ds, cleanups, objects, settings);
    deletes = new DeleteFile(ds, cleanups, objects, settings);
    sweeper = new ObjectCleanupSweeper(cleanups, objects, settings);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
    const names: string[] = [];
    for await (const o of store.client.listObjectsV2(store.bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length > 0) await store.client.removeObjects(store.bucket, names);
    await store.client.removeBucket(store.bucket);
  });

  const intents = (key: string) =>
    ds.query('SELECT reason, lease_owner FROM object_cleanups WHERE object_key = $1', [key]);
  const fileRows = (id: string) => ds.query('SELECT id FROM files WHERE id = $1', [id]);
  const unfinished = async (key: string) =>
    (await store.client.findUploadId(store.bucket, key)) !== undefined;

  it('a crash between the object write and the row commit leaves an intent; the sweeper removes the orphan after the lease', async () => {
    const pending = await uploads.begin(WS, { filename: 'a.bin', mimeType: 'application/octet-stream' });
    const key = pending.file.objectKey;
    expect(await intents(key)).toEqual([expect.objectContaining({ reason: 'upload' })]);
    expect(await uploads.write(pending, Readable.from([randomBytes(1000)]))).toBe(1000);
    // The process dies here: no commit, no cleanup, no more renewals.
    await pending.keeper.stop();
    expect(await objects.exists(key)).toBe(true);
    expect(await fileRows(pending.file.id)).toEqual([]);

    // While the lease is live, the sweeper leaves it alone.
    expect(await sweeper.sweepOnce()).toEqual({ removed: 0, kept: 0, failed: 0 });
    expect(await objects.exists(key)).toBe(true);

    await sleep(settings.leaseMs + 100);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 1, kept: 0, failed: 0 });
    expect(await objects.exists(key)).toBe(false);
    expect(await intents(key)).toEqual([]);
    expect(await fileRows(pending.file.id)).toEqual([]);
  });

  it('a crash in the middle of a multipart write leaves an unfinished upload; the sweeper aborts it', async () => {
    const pending = await uploads.begin(WS, { filename: 'big.bin', mimeType: 'application/octet-stream' });
    const key = pending.file.objectKey;
    // What a dying process leaves behind: one uploaded part of a multipart upload, never completed.
    const uploadId = await store.client.initiateNewMultipartUpload(store.bucket, key, {});
    await store.client.uploadPart(
      { bucketName: store.bucket, objectName: key, uploadID: uploadId, partNumber: 1, headers: {} },
      randomBytes(5 * MIB),
    );
    expect(await unfinished(key)).toBe(true);
    await pending.keeper.stop(); // and dies: no more renewals

    await sleep(settings.leaseMs + 100);
    expect((await sweeper.sweepOnce()).removed).toBe(1);
    expect(await unfinished(key)).toBe(false);
    expect(await objects.exists(key)).toBe(false);
    expect(await intents(key)).toEqual([]);
  });

  it('a crash between the row delete and the object delete leaves an intent; the sweeper removes the object', async () => {
    const bytes = randomBytes(2048);
    const pending = await uploads.begin(WS, { filename: 'keep.txt', mimeType: 'text/plain' });
    const file = await uploads.commit(pending, await uploads.write(pending, Readable.from([bytes])));
    expect(await intents(file.objectKey)).toEqual([]);
    expect(sha(await readAll(await objects.open(file.objectKey)))).toBe(sha(bytes));

    const detached = await deletes.detach(WS, file.id);
    // The process dies here: the File is gone, its object is not, and the intent says so.
    expect(await fileRows(file.id)).toEqual([]);
    expect(await objects.exists(file.objectKey)).toBe(true);
    expect(await intents(file.objectKey)).toEqual([expect.objectContaining({ reason: 'delete' })]);
    await expect(deletes.detach(WS, file.id)).rejects.toThrow(/not found/);

    await sleep(settings.leaseMs + 100);
    expect((await sweeper.sweepOnce()).removed).toBe(1);
    expect(await objects.exists(file.objectKey)).toBe(false);
    expect(await intents(detached.objectKey)).toEqual([]);
  });

  it('an upload whose lease a sweeper took over cannot commit, and cleans up after itself', async () => {
    const pending = await uploads.begin(WS, {
      filename: 'stalled.bin',
      mimeType: 'application/octet-stream',
    });
    const key = pending.file.objectKey;
    const size = await uploads.write(pending, Readable.from([randomBytes(100)]));
    // The upload stalls past its lease (its renewals stop too, as in a frozen process) and another
    // process's sweeper claims the intent (and is slow).
    await pending.keeper.stop();
    await sleep(settings.leaseMs + 100);
    const [claim] = await cleanups.claimExpired({ leaseMs: 60_000, graceMs: 0, limit: 10 });
    expect(claim?.objectKey).toBe(key);

    await expect(uploads.commit(pending, size)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await fileRows(pending.file.id)).toEqual([]);
    await uploads.abandon(pending);
    expect(await objects.exists(key)).toBe(false);
    // The sweeper's claim is still its own to finish; removing a missing object is fine.
    expect(await intents(key)).toHaveLength(1);
    expect(await cleanups.release(claim!.lease)).toBe(true);
  });

  it('a slow upload renews its lease, so a sweeper with no grace never touches it, and it commits', async () => {
    // Its own 1 s lease (renewed every ~333 ms), so a loaded machine does not miss a renewal.
    const slowSettings = { ...settings, leaseMs: 1000 };
    const slowUploads = new UploadFile(ds, cleanups, objects, slowSettings);
    const pieces = Array.from({ length: 16 }, () => randomBytes(1024));
    const pending = await slowUploads.begin(WS, {
      filename: 'slow.bin',
      mimeType: 'application/octet-stream',
    });
    let sweeping = true;
    const sweeps = (async () => {
      let removed = 0;
      while (sweeping) {
        removed += (await sweeper.sweepOnce()).removed;
        await sleep(25);
      }
      return removed;
    })();
    // 16 × 250 ms = four times the lease.
    const size = await slowUploads.write(pending, Readable.from(slowly(pieces, 250)));
    const file = await slowUploads.commit(pending, size);
    sweeping = false;
    expect(await sweeps).toBe(0);
    expect(sha(await readAll(await objects.open(file.objectKey)))).toBe(sha(Buffer.concat(pieces)));
  });

  it('a commit delayed past the lease (a loaded database) still commits: the lease is renewed until the commit', async () => {
    const slowSettings = { ...settings, leaseMs: 1000 };
    const slowUploads = new UploadFile(ds, cleanups, objects, slowSettings);
    const bytes = randomBytes(4096);
    const pending = await slowUploads.begin(WS, {
      filename: 'late.bin',
      mimeType: 'application/octet-stream',
    });
    const size = await slowUploads.write(pending, Readable.from([bytes]));
    // Three leases pass between the last byte and the commit, with a sweeper (no grace) running.
    let removed = 0;
    const until = Date.now() + 3 * slowSettings.leaseMs;
    while (Date.now() < until) {
      removed += (await sweeper.sweepOnce()).removed;
      await sleep(25);
    }
    expect(removed).toBe(0);
    const file = await slowUploads.commit(pending, size);
    expect(await intents(file.objectKey)).toEqual([]);
    expect(sha(await readAll(await objects.open(file.objectKey)))).toBe(sha(bytes));
  });

  it('a stray intent never removes the object of a live File', async () => {
    const pending = await uploads.begin(WS, { filename: 'live.txt', mimeType: 'text/plain' });
    const file = await uploads.commit(
      pending,
      await uploads.write(pending, Readable.from([Buffer.from('x')])),
    );
    await cleanups.register(ds.manager, { objectKey: file.objectKey, reason: 'delete', leaseMs: 1 });
    await sleep(50);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 0, kept: 1, failed: 0 });
    expect(await objects.exists(file.objectKey)).toBe(true);
    expect(await intents(file.objectKey)).toEqual([]);
  });

  it('reads a large source at most about one part ahead of the parts the object store holds', async () => {
    const bytes = randomBytes(21 * MIB + 5);
    const key = `workspaces/${WS}/files/test-read-ahead`;
    const stored = async () => {
      let n = 0;
      for await (const u of store.client.listIncompleteUploads(store.bucket, key, true))
        if (u.key === key) n += u.size;
      return n;
    };
    let pulled = 0;
    let furthest = 0;
    async function* source() {
      for (let off = 0; off < bytes.length; off += 64 * 1024) {
        // One part may be in flight and the next one collecting: never more than that unstored.
        if (off % MIB === 0) furthest = Math.max(furthest, pulled - (await stored()));
        const chunk = bytes.subarray(off, off + 64 * 1024);
        pulled += chunk.length;
        yield chunk;
      }
    }
    expect(await objects.write(key, Readable.from(source()), { contentType: 'x/y' })).toBe(bytes.length);
    expect(furthest).toBeGreaterThan(0);
    expect(furthest).toBeLessThanOrEqual(2 * settings.partBytes + 64 * 1024);
    expect(sha(await readAll(await objects.open(key)))).toBe(sha(bytes));
    await objects.remove(key);
  });

  it('writes an 11 MiB source as three parts byte-exact; a source failing mid-way leaves no unfinished upload', async () => {
    const bytes = randomBytes(11 * MIB);
    const key = `workspaces/${WS}/files/test-multipart`;
    const pieces = Array.from({ length: 176 }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    expect(await objects.write(key, Readable.from(pieces), { contentType: 'application/x-test' })).toBe(
      bytes.length,
    );
    expect(sha(await readAll(await objects.open(key)))).toBe(sha(bytes));
    const stat = await store.client.statObject(store.bucket, key);
    expect(stat.metaData['content-type']).toBe('application/x-test');
    await objects.remove(key);

    async function* failing() {
      yield randomBytes(6 * MIB);
      throw new Error('client went away');
    }
    await expect(objects.write(key, Readable.from(failing()), { contentType: 'x/y' })).rejects.toThrow(
      /went away/,
    );
    expect(await unfinished(key)).toBe(false);
    expect(await objects.exists(key)).toBe(false);
  });
});
