import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDataSource, databaseContents, schemaStatus, SCHEMA_LEVEL } from '@mango/persistence';
import { Keyring } from '@mango/platform-secrets';
import { backupRefused } from './backup-error';
import { BackupEnv, objectStoreOf } from './backup-settings';
import { dumpDatabase } from './database-dump';
import { encryptStream, SealWith } from './encryption';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BackupHeader,
  BackupManifest,
  MEMBER,
  ObjectRecord,
} from './manifest';
import { digesting, listObjects, openObject } from './object-copy';
import { findPgTool, pgConnectionEnv } from './pg-tools';
import { TarEntrySource, writeTar } from './tar-archive';

export interface BackupOptions {
  out: string;
  seal: SealWith;
  env: BackupEnv;
  /** The process's keyring (MANGO_KEYRING…), sealed into the archive; null: none configured. */
  keyring: Keyring | null;
  /** Everything else the process environment holds (PATH, MANGO_PG_BIN_DIR). */
  processEnv: Record<string, string | undefined>;
  progress?: (line: string) => void;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

export interface StepTiming {
  step: string;
  ms: number;
}

export interface BackupSummary {
  file: string;
  archive_bytes: number;
  counts: BackupManifest['counts'];
  vanished: number;
  schema: BackupHeader['schema'];
  steps: StepTiming[];
}

/** The keyring as a MANGO_KEYRING_FILE (one `id:base64key` per line, the active key first). */
export function keyringFileText(keyring: Keyring): string {
  return `${keyring
    .ids()
    .map((id) => `${id}:${keyring.key(id).toString('base64')}`)
    .join('\n')}\n`;
}

/**
 * `mango backup`: one age-encrypted tar of the database dump (pg_dump, custom format, one snapshot), every
 * object of the bucket and the keyring, streamed to `<out>.partial` and renamed to `out` when complete
 * (docs/operations.md, "Backup and restore"). The dump is taken first: an object created afterwards is
 * copied without a row (the cleanup sweeper's intents in the dump cover uploads in flight); an object
 * deleted between the dump and its copy is recorded as vanished.
 */
export async function runBackup(o: BackupOptions): Promise<BackupSummary> {
  const steps: StepTiming[] = [];
  const progress = o.progress ?? (() => undefined);
  const began = Date.now();
  if (
    await stat(o.out).then(
      () => true,
      () => false,
    )
  )
    throw backupRefused(`${o.out} exists: choose a new file (a backup never overwrites one)`);

  const ds = createDataSource({
    url: o.env.MANGO_DATABASE_URL,
    poolSize: 1,
    applicationName: 'mango-backup',
  });
  await ds.initialize();
  let status, contents;
  try {
    status = await schemaStatus(ds);
    contents = await databaseContents(ds);
  } finally {
    await ds.destroy();
  }
  const pgDump = await findPgTool(
    'pg_dump',
    contents.serverMajor,
    o.processEnv,
    `the database server is PostgreSQL ${contents.serverMajor}; an older pg_dump refuses it`,
  );
  const store = objectStoreOf(o.env);
  if (!(await store.client.bucketExists(store.bucket)))
    throw backupRefused(`the bucket ${store.bucket} does not exist at ${o.env.MANGO_S3_ENDPOINT}`);
  steps.push({ step: 'checks', ms: Date.now() - began });

  const createdAt = new Date();
  const schema: BackupHeader['schema'] = {
    required_level: status.requiredLevel,
    code_level: SCHEMA_LEVEL,
    migrations: status.applied.map((m) => m.name),
  };
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: createdAt.toISOString(),
    schema,
    database: { pg_dump_major: pgDump.major, server_major: contents.serverMajor },
    keyring: o.keyring !== null,
  };
  const keyringText = o.keyring ? Buffer.from(keyringFileText(o.keyring)) : null;
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: header.created_at,
    schema,
    counts: {
      dump_parts: 0,
      dump_bytes: 0,
      objects: 0,
      object_bytes: 0,
      keyring_keys: o.keyring?.ids().length ?? 0,
    },
    database: { sha256: '', bytes: 0, parts: [] },
    objects: [],
    vanished: [],
    keyring: keyringText
      ? { sha256: createHash('sha256').update(keyringText).digest('hex'), key_ids: o.keyring!.ids() }
      : null,
  };

  async function* members(): AsyncGenerator<TarEntrySource> {
    yield { name: MEMBER.header, size: 0, body: Buffer.from(JSON.stringify(header, null, 2)) };
    if (keyringText) yield { name: MEMBER.keyring, size: keyringText.length, body: keyringText };

    let t = Date.now();
    const whole = createHash('sha256');
    for await (const part of dumpDatabase(pgDump, pgConnectionEnv(o.env.MANGO_DATABASE_URL))) {
      whole.update(part);
      const name = MEMBER.dumpPart(manifest.database.parts.length);
      manifest.database.parts.push({
        bytes: part.length,
        sha256: createHash('sha256').update(part).digest('hex'),
      });
      manifest.database.bytes += part.length;
      yield { name, size: part.length, body: part };
    }
    manifest.database.sha256 = whole.digest('hex');
    manifest.counts.dump_parts = manifest.database.parts.length;
    manifest.counts.dump_bytes = manifest.database.bytes;
    steps.push({ step: 'database dump', ms: Date.now() - t });
    progress(`database: ${manifest.database.bytes} bytes in ${manifest.database.parts.length} part(s)\n`);

    t = Date.now();
    const listed = await listObjects(store);
    for (const object of listed) {
      const opened = await openObject(store, object.key);
      if (!opened) {
        manifest.vanished.push(object.key);
        continue;
      }
      const d = digesting(opened.body as AsyncIterable<Buffer>);
      yield { name: MEMBER.object(manifest.objects.length), size: object.bytes, body: d.body };
      const record: ObjectRecord = {
        key: object.key,
        bytes: d.state.bytes,
        sha256: d.state.sha256,
        content_type: opened.contentType,
      };
      manifest.objects.push(record);
      manifest.counts.objects += 1;
      manifest.counts.object_bytes += record.bytes;
    }
    steps.push({ step: 'objects', ms: Date.now() - t });
    progress(
      `objects: ${manifest.counts.objects} (${manifest.counts.object_bytes} bytes)` +
        `${manifest.vanished.length ? `, ${manifest.vanished.length} deleted while the backup ran` : ''}\n`,
    );
    const text = Buffer.from(JSON.stringify(manifest));
    yield { name: MEMBER.manifest, size: text.length, body: text };
  }

  // The header's size is known only once encoded: fill it in lazily.
  async function* sized(): AsyncGenerator<TarEntrySource> {
    for await (const m of members()) yield m.body instanceof Uint8Array ? { ...m, size: m.body.length } : m;
  }

  const partial = `${o.out}.partial`;
  if (await exists(partial))
    throw backupRefused(`${partial} exists (an interrupted backup?): remove it or choose another --out`);
  const t = Date.now();
  try {
    const cipher = await encryptStream(Readable.from(writeTar(sized(), createdAt)), o.seal);
    await pipeline(cipher, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
    await rename(partial, o.out);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
  steps.push({ step: 'archive written', ms: Date.now() - t });
  const size = (await stat(o.out)).size;
  return {
    file: o.out,
    archive_bytes: size,
    counts: manifest.counts,
    vanished: manifest.vanished.length,
    schema,
    steps,
  };
}
