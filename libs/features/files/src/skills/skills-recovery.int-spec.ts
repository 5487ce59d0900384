import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { createDataSource } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { FileObjects } from '../file-objects';
import { DEFAULT_FILES_SETTINGS, FilesSettings } from '../files.settings';
import { ObjectCleanupRepository } from '../object-cleanup.repository';
import { ObjectCleanupSweeper } from '../object-cleanup.sweeper';
import type { SkillForm } from './skill-form';
import { SkillsService } from './skills.service';
import { DEFAULT_SKILLS_SETTINGS } from './skills.settings';
import { UploadSkill } from './upload-skill.usecase';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WS = 'wrkspc_default';

/** A received bundle, as readSkillForm leaves it, without an HTTP request. */
async function formOf(files: Array<[string, string]>): Promise<SkillForm> {
  const root = await mkdtemp(join(tmpdir(), 'mango-skill-test-'));
  for (const [path, content] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  const md = files.find(([p]) => p.endsWith('/SKILL.md'))?.[1];
  return {
    displayTitle: null,
    root,
    paths: files.map(([p]) => p),
    expandedBytes: files.reduce((n, [, c]) => n + Buffer.byteLength(c), 0),
    skillMd: md === undefined ? null : Buffer.from(md),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

const BUNDLE: Array<[string, string]> = [
  ['s/SKILL.md', '---\nname: s\ndescription: d\n---\n'],
  ['s/a.txt', 'a'],
];

describe('Skill upload and delete recovery (real PostgreSQL + S3, service steps)', () => {
  const settings: FilesSettings = {
    ...DEFAULT_FILES_SETTINGS,
    leaseMs: 300,
    sweepGraceMs: 0,
    sweepIntervalMs: 0,
  };
  let db: TestDatabase;
  let ds: DataSource;
  let store: ObjectStore;
  let objects: FileObjects;
  let cleanups: ObjectCleanupRepository;
  let uploads: UploadSkill;
  let skills: SkillsService;
  let sweeper: ObjectCleanupSweeper;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await createTestDatabase('skillsrecovery');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket: `mango-skrecovery-${randomBytes(3).toString('hex')}`,
    });
    await store.ensureBucket();
    cleanups = new ObjectCleanupRepository(ds);
    objects = new FileObjects(store, settings);
    uploads = new UploadSkill(ds, cleanups, objects, settings, DEFAULT_SKILLS_SETTINGS);
    skills = new SkillsService(ds, objects, cleanups, settings);
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
    ds.query('SELECT reason FROM object_cleanups WHERE object_key = $1', [key]);
  const count = async (table: string) => (await ds.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

  it('a crash between the archive write and the row commit leaves an intent; the sweeper removes the orphan', async () => {
    const form = await formOf(BUNDLE);
    const stored = await uploads.store(WS, newId('skill'), form);
    await form.dispose();
    // The process dies here: no commit, no renewals.
    await stored.keeper.stop();
    expect(await objects.exists(stored.objectKey)).toBe(true);
    expect(await intents(stored.objectKey)).toEqual([{ reason: 'upload' }]);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 0, kept: 0, failed: 0 });
    await sleep(settings.leaseMs + 100);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 1, kept: 0, failed: 0 });
    expect(await objects.exists(stored.objectKey)).toBe(false);
    expect(await intents(stored.objectKey)).toEqual([]);
    expect([await count('skills'), await count('skill_versions')]).toEqual([0, 0]);
  });

  it('an upload whose lease a sweeper took over cannot commit, and leaves nothing behind', async () => {
    const form = await formOf(BUNDLE);
    const stored = await uploads.store(WS, newId('skill'), form);
    await form.dispose();
    await stored.keeper.stop(); // stalled past its lease, its renewals too (a frozen process)
    await sleep(settings.leaseMs + 100);
    expect((await sweeper.sweepOnce()).removed).toBe(1);
    await expect(uploads.commit(stored, async () => 'inserted')).rejects.toThrow(/lost its cleanup lease/);
    expect(await objects.exists(stored.objectKey)).toBe(false);
    expect(await intents(stored.objectKey)).toEqual([]);
  });

  it('a crash between the row delete and the archive removal leaves intents; the sweeper removes the archives', async () => {
    const form = await formOf(BUNDLE);
    const skillId = newId('skill');
    const stored = await uploads.store(WS, skillId, form);
    await uploads.commit(stored, async (tx) => {
      await tx.query(
        `INSERT INTO skills (id, workspace_id, latest_version, next_version, created_at, updated_at)
         VALUES ($1, $2, 1, 2, now(), now())`,
        [skillId, WS],
      );
      await tx.query(
        `INSERT INTO skill_versions (skill_id, version, workspace_id, name, description, directory, object_key,
                                     archive_size_bytes, archive_sha256, expanded_size_bytes, file_count, created_at)
         VALUES ($1, 1, $2, 's', 'd', 's', $3, $4, $5, 2, 2, now())`,
        [skillId, WS, stored.objectKey, stored.sizeBytes, stored.sha256],
      );
    });
    await form.dispose();
    expect(await intents(stored.objectKey)).toEqual([]);
    const detached = await skills.detachSkill(WS, skillId);
    // The process dies here: the rows are gone, the archive and its intent remain.
    expect(detached.map((d) => d.objectKey)).toEqual([stored.objectKey]);
    expect(await objects.exists(stored.objectKey)).toBe(true);
    expect(await intents(stored.objectKey)).toEqual([{ reason: 'delete' }]);
    await sleep(settings.leaseMs + 100);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 1, kept: 0, failed: 0 });
    expect(await objects.exists(stored.objectKey)).toBe(false);
    expect([await count('skills'), await count('skill_versions'), await count('object_cleanups')]).toEqual([
      0, 0, 0,
    ]);
  });

  it('the sweeper never removes the archive of a live Skill version', async () => {
    const form = await formOf(BUNDLE);
    const skillId = newId('skill');
    const stored = await uploads.store(WS, skillId, form);
    await form.dispose();
    await uploads.commit(stored, async (tx) => {
      await tx.query(
        `INSERT INTO skills (id, workspace_id, latest_version, next_version, created_at, updated_at)
         VALUES ($1, $2, 1, 2, now(), now())`,
        [skillId, WS],
      );
      await tx.query(
        `INSERT INTO skill_versions (skill_id, version, workspace_id, name, description, directory, object_key,
                                     archive_size_bytes, archive_sha256, expanded_size_bytes, file_count, created_at)
         VALUES ($1, 1, $2, 's', 'd', 's', $3, $4, $5, 2, 2, now())`,
        [skillId, WS, stored.objectKey, stored.sizeBytes, stored.sha256],
      );
    });
    // A stray intent naming the live archive (never expected) is dropped, the object kept.
    await cleanups.register(ds.manager, { objectKey: stored.objectKey, reason: 'delete', leaseMs: 1 });
    await sleep(50);
    expect(await sweeper.sweepOnce()).toEqual({ removed: 0, kept: 1, failed: 0 });
    expect(await objects.exists(stored.objectKey)).toBe(true);
    await skills.deleteSkill(WS, skillId);
    expect(await objects.exists(stored.objectKey)).toBe(false);
  });
});
