import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { digestCredential, generateCredential, type Principal } from '@mango/feature-auth';
import {
  type CleanupLease,
  DEFAULT_FILES_SETTINGS,
  FileObjects,
  FilesSettings,
  LeaseLostError,
  ObjectCleanupRepository,
  ObjectCleanupSweeper,
} from '@mango/feature-files';
import { parseMemoryAttachments } from '@mango/domain-memory';
import { attachSessionMemoryStores, createDataSource } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { MemoriesService } from './memories.service';
import { MemoryAccess } from './memory-access';
import { MemoryObjects } from './memory-objects';
import { MemoryStoresService } from './memory-stores.service';
import { DEFAULT_MEMORY_SETTINGS, MemorySettings } from './memory.settings';

/** Object writes that can be held after the bytes are stored, and removals that can fail: a stalled or crashed process. */
class ControlledObjects extends MemoryObjects {
  /** `fail`: the put then fails (the store lost the object a sweeper removed while it was being written). */
  holdAfterPut?: { stored: () => void; release: Promise<void>; fail?: Error };
  failRemovals = 0;
  override async put(key: string, content: Buffer): Promise<void> {
    await super.put(key, content);
    const hold = this.holdAfterPut;
    if (hold) {
      hold.stored();
      await hold.release;
      if (hold.fail) throw hold.fail;
    }
  }
  override async remove(key: string): Promise<void> {
    if (this.failRemovals > 0) {
      this.failRemovals--;
      throw new Error('object store unavailable');
    }
    return super.remove(key);
  }
}

/** A process whose lease renewals stop (it stalled or died): while `frozen`, nothing reaches the database. */
class FreezableCleanups extends ObjectCleanupRepository {
  frozen = false;
  override async renew(lease: CleanupLease, leaseMs: number): Promise<boolean> {
    return this.frozen ? true : super.renew(lease, leaseMs);
  }
}

/**
 * Memory write and delete recovery on real PostgreSQL and S3, driving the service with a held object
 * write (the process stalls or dies between writing the object and committing the row) and a failing
 * object removal (the store is down right after the rows are gone). The Files sweeper finishes both.
 */
describe('Memory content recovery (real PostgreSQL + S3)', () => {
  const settings: MemorySettings = { ...DEFAULT_MEMORY_SETTINGS, leaseMs: 300 };
  const sweepSettings: FilesSettings = {
    ...DEFAULT_FILES_SETTINGS,
    leaseMs: 300,
    sweepGraceMs: 0,
    sweepIntervalMs: 0,
  };
  const p: Principal = { kind: 'workspace', workspaceId: 'wrkspc_default', keyId: 'key_test' };
  let db: TestDatabase;
  let ds: DataSource;
  let store: ObjectStore;
  let objects: ControlledObjects;
  let cleanups: FreezableCleanups;
  let memories: MemoriesService;
  let stores: MemoryStoresService;
  let sweeper: ObjectCleanupSweeper;

  const keys = async () => {
    const out: string[] = [];
    for await (const o of store.client.listObjectsV2(store.bucket, '', true)) if (o.name) out.push(o.name);
    return out.sort();
  };
  const count = async (table: string) =>
    (await ds.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n as number;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await createTestDatabase('memoryrecovery');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket: `mango-memrec-${randomBytes(3).toString('hex')}`,
    });
    await store.ensureBucket();
    cleanups = new FreezableCleanups(ds);
    objects = new ControlledObjects(store);
    const access = new MemoryAccess();
    memories = new MemoriesService(ds, access, cleanups, objects, settings);
    stores = new MemoryStoresService(ds, access, cleanups, objects, settings);
    sweeper = new ObjectCleanupSweeper(cleanups, new FileObjects(store, sweepSettings), sweepSettings);
  });
  afterAll(async () => {
    for (const k of await keys()) await store.client.removeObject(store.bucket, k);
    await store.client.removeBucket(store.bucket);
    await ds.destroy();
    await db.drop();
  });

  it('a write stalled (or dead) between object write and row commit: the sweeper removes the object and the write can never commit', async () => {
    const s = await stores.create('wrkspc_default', { name: 'recovery' });
    let stored!: () => void;
    let release!: () => void;
    const isStored = new Promise<void>((r) => (stored = r));
    objects.holdAfterPut = { stored, release: new Promise<void>((r) => (release = r)) };
    cleanups.frozen = true; // the writer stalls (or dies): its lease is renewed no more
    const write = memories.create(p, s.id, {}, { path: '/a', content: 'orphan?' });
    const settled = write.then(
      () => 'committed',
      (e: unknown) => e,
    );
    await isStored;
    objects.holdAfterPut = undefined;
    // What a crash here leaves: the object and its leased intent, no Memory, no version.
    const [object] = await keys();
    expect(object).toMatch(new RegExp(`^workspaces/wrkspc_default/memory_stores/${s.id}/versions/memver_`));
    expect(await ds.query('SELECT object_key, reason FROM object_cleanups')).toEqual([
      { object_key: object, reason: 'upload' },
    ]);
    expect(await count('memories')).toBe(0);

    // The lease (300 ms, never renewed by a stalled writer) runs out; a sweeper claims the intent.
    let swept = { removed: 0, kept: 0, failed: 0 };
    for (let i = 0; i < 100 && swept.removed === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      swept = await sweeper.sweepOnce();
    }
    expect(swept).toEqual({ removed: 1, kept: 0, failed: 0 });
    expect(await keys()).toEqual([]);

    // The stalled writer wakes up: its lease is gone, so it must not commit, and it cleans after itself.
    cleanups.frozen = false;
    release();
    expect(await settled).toBeInstanceOf(LeaseLostError);
    expect(await count('memories')).toBe(0);
    expect(await count('memory_versions')).toBe(0);
    expect(await count('object_cleanups')).toBe(0);
    expect(await keys()).toEqual([]);
    // And the path is still free for a healthy write.
    const ok = await memories.create(p, s.id, { view: 'full' }, { path: '/a', content: 'fine' });
    expect(ok.content).toBe('fine');
    expect(await keys()).toHaveLength(1);
  });

  it('a stalled write whose object put fails after a sweeper took its lease answers the lost lease (retryable), not the store error', async () => {
    const s = await stores.create('wrkspc_default', { name: 'recovery-put-fails' });
    let stored!: () => void;
    let release!: () => void;
    const isStored = new Promise<void>((r) => (stored = r));
    const storeError = new Error('We encountered an internal error. Please try again.');
    const before = await count('memories');
    objects.holdAfterPut = { stored, release: new Promise<void>((r) => (release = r)), fail: storeError };
    cleanups.frozen = true;
    const settled = memories.create(p, s.id, {}, { path: '/b', content: 'lost' }).then(
      () => 'committed',
      (e: unknown) => e,
    );
    await isStored;
    objects.holdAfterPut = undefined;
    let swept = { removed: 0, kept: 0, failed: 0 };
    for (let i = 0; i < 100 && swept.removed === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      swept = await sweeper.sweepOnce();
    }
    expect(swept).toEqual({ removed: 1, kept: 0, failed: 0 });
    cleanups.frozen = false;
    release();
    expect(await settled).toBeInstanceOf(LeaseLostError);
    expect(await count('memories')).toBe(before);
    expect(await count('object_cleanups')).toBe(0);
  });

  it('a live write whose object put outlasts its lease (a loaded S3) keeps its lease and commits', async () => {
    const s = await stores.create('wrkspc_default', { name: 'slow put' });
    let stored!: () => void;
    let release!: () => void;
    const isStored = new Promise<void>((r) => (stored = r));
    objects.holdAfterPut = { stored, release: new Promise<void>((r) => (release = r)) };
    const write = memories.create(p, s.id, { view: 'full' }, { path: '/slow', content: 'kept' });
    await isStored;
    objects.holdAfterPut = undefined;
    // Five leases long, with a sweeper running: the renewed intent is never taken.
    for (let i = 0; i < 15; i++) {
      await new Promise((r) => setTimeout(r, 100));
      expect(await sweeper.sweepOnce()).toEqual({ removed: 0, kept: 0, failed: 0 });
    }
    release();
    expect((await write).content).toBe('kept');
    expect(await count('object_cleanups')).toBe(0);
  });

  it('a Work-token write whose token is reclaimed after its object is written never commits (the lease is checked in the writing transaction)', async () => {
    const s = await stores.create('wrkspc_default', { name: 'fenced' });
    const envId = newId('environment');
    const sessionId = newId('session');
    const workId = newId('work');
    const token = generateCredential('workToken');
    await ds.query(
      `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', $1, '{"type":"self_hosted"}', '{}', now(), now())`,
      [envId],
    );
    await ds.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                               usage, last_seq, created_at, updated_at)
         VALUES ($1, 'wrkspc_default', $2, $3, 1, '{}', 'running', '{}', '{}', 0, now(), now())`,
        [sessionId, envId, newId('agent')],
      );
      await attachSessionMemoryStores(
        tx,
        'wrkspc_default',
        sessionId,
        parseMemoryAttachments([{ type: 'memory_store', memory_store_id: s.id }]),
      );
    });
    await ds.query(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, token_digest,
                               created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                               lease_expires_at, ttl_seconds)
       VALUES ($1, 'wrkspc_default', $2, 'session', $3, 'active', '{}', $4, now(), now(), now(), now(), now(),
               now() + interval '5 minutes', 300)`,
      [workId, envId, sessionId, digestCredential(token)],
    );
    const worker: Principal = {
      kind: 'work',
      workspaceId: 'wrkspc_default',
      environmentId: envId,
      workId,
      sessionId,
      tokenDigest: digestCredential(token),
      live: true,
    };
    const before = await keys();
    let stored!: () => void;
    let release!: () => void;
    const isStored = new Promise<void>((r) => (stored = r));
    objects.holdAfterPut = { stored, release: new Promise<void>((r) => (release = r)) };
    const write = memories.create(worker, s.id, {}, { path: '/late', content: 'from the old worker' });
    const settled = write.then(
      () => 'committed',
      (e: unknown) => e,
    );
    await isStored;
    objects.holdAfterPut = undefined;
    // Reclaimed meanwhile: the item is queued again with a fresh token.
    await ds.query(
      `UPDATE work_items SET state = 'queued', token_digest = $2, lease_expires_at = NULL WHERE id = $1`,
      [workId, digestCredential(generateCredential('workToken'))],
    );
    release();
    expect(await settled).toMatchObject({ message: 'the Work token is no longer valid' });
    expect(await ds.query('SELECT 1 FROM memories WHERE memory_store_id = $1', [s.id])).toEqual([]);
    expect(await ds.query('SELECT 1 FROM memory_versions WHERE memory_store_id = $1', [s.id])).toEqual([]);
    expect(await count('object_cleanups')).toBe(0);
    expect(await keys()).toEqual(before);
  });

  it('a Store delete whose object removal fails leaves intents that the sweeper finishes', async () => {
    const s = await stores.create('wrkspc_default', { name: 'to delete' });
    const m = await memories.create(p, s.id, {}, { path: '/x', content: 'one' });
    await memories.update(p, s.id, m.id, {}, { content: 'two' });
    const mine = async () => (await keys()).filter((k) => k.includes(s.id));
    expect(await mine()).toHaveLength(2);
    objects.failRemovals = 10;
    expect(await stores.delete(p, s.id)).toEqual({ id: s.id, type: 'memory_store_deleted' });
    objects.failRemovals = 0;
    expect(await mine()).toHaveLength(2);
    expect(await count('object_cleanups')).toBe(2);
    expect(await ds.query('SELECT 1 FROM memory_versions WHERE memory_store_id = $1', [s.id])).toEqual([]);
    let removed = 0;
    for (let i = 0; i < 100 && removed < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      removed += (await sweeper.sweepOnce()).removed;
    }
    expect(removed).toBe(2);
    expect(await mine()).toEqual([]);
    expect(await count('object_cleanups')).toBe(0);
  });
});
