import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { DomainError } from '@mango/domain-kernel';
import { createDataSource, databaseContents, MIGRATIONS, SCHEMA_LEVEL } from '@mango/persistence';
import { keyringFileEntries, KeyringError, parseKeyringEntries } from '@mango/platform-secrets';
import { backupRefused, targetNotEmpty } from './backup-error';
import { BackupEnv, objectStoreOf } from './backup-settings';
import { restoreDatabase } from './database-dump';
import { decryptStream, describeAgeFailure, OpenWith } from './encryption';
import {
  BackupHeader,
  BackupManifest,
  DUMP_PART,
  isMemberName,
  MEMBER,
  OBJECT,
  parseHeader,
  parseManifest,
  restoreSchemaVerdict,
} from './manifest';
import { assertEmptyBucket, digesting, putObject } from './object-copy';
import { findPgTool, pgConnectionEnv, PgTool } from './pg-tools';
import { readSmall, readTar, TarEntry } from './tar-archive';
import type { StepTiming } from './backup';

export interface RestoreOptions {
  in: string;
  open: OpenWith;
  /** Where to write the archive's keyring (a MANGO_KEYRING_FILE, mode 0600); never overwritten. */
  keyringOut?: string;
  /** Only decrypt and verify the archive; no target is read or written. */
  verifyOnly?: boolean;
  /** The target (database and bucket); not needed with verifyOnly. */
  env?: BackupEnv;
  processEnv: Record<string, string | undefined>;
  progress?: (line: string) => void;
}

export interface RestoreSummary {
  created_at: string;
  schema: BackupHeader['schema'];
  counts: BackupManifest['counts'];
  vanished: number;
  /** Migrations this build has that the backup's database lacks: run `mango migrate` before starting. */
  pending_migrations: string[];
  keyring_key_ids: string[];
  keyring_written: string | null;
  steps: StepTiming[];
}

const KNOWN_MIGRATIONS = MIGRATIONS.map((M) => new M().name ?? M.name);
const MAX_JSON_MEMBER = 1 << 20;
const MAX_MANIFEST = 512 << 20;

/** The archive's members, decrypted; errors that are not our refusals are age's (damaged, tampered). */
async function* members(file: string, openWith: OpenWith): AsyncGenerator<TarEntry> {
  const cipher = createReadStream(file);
  const plain = await decryptStream(cipher, openWith);
  // A chunk that fails to authenticate (damaged, tampered, truncated) fails where it is read: say so.
  const authenticated = (async function* () {
    try {
      for await (const chunk of plain as AsyncIterable<Buffer>) yield chunk;
    } catch (e) {
      throw e instanceof DomainError ? e : describeAgeFailure(e);
    }
  })();
  try {
    for await (const entry of readTar(authenticated, isMemberName)) yield entry;
  } finally {
    plain.destroy();
    cipher.destroy();
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Verified {
  header: BackupHeader;
  headerSha: string;
  manifest: BackupManifest;
  keyringText: Buffer | null;
  pending: string[];
}

/** Member order: header, [keyring], dump parts, objects, manifest. */
function expect(name: string, want: string, i: number) {
  if (name !== want)
    throw backupRefused(
      `the archive is out of order: member ${i} is ${JSON.stringify(name)}, expected ${want}`,
    );
}

/**
 * Pass 1: reads the whole archive without writing anything — age authenticates every chunk and the end;
 * the members must come in order, and every digest and count must equal the manifest's.
 */
async function verifyArchive(
  o: RestoreOptions,
  onHeader: (h: BackupHeader) => Promise<void>,
): Promise<Verified> {
  const it = members(o.in, o.open);
  let i = 0;
  const next = async (): Promise<TarEntry | null> => {
    const r = await it.next();
    i++;
    return r.done ? null : r.value;
  };
  let entry = await next();
  if (!entry) throw backupRefused('the archive is empty');
  expect(entry.name, MEMBER.header, 0);
  const headerText = await readSmall(entry, MAX_JSON_MEMBER);
  const header = parseHeader(headerText);
  const { pending } = restoreSchemaVerdict(header.schema, KNOWN_MIGRATIONS, SCHEMA_LEVEL);
  await onHeader(header);

  entry = await next();
  let keyringText: Buffer | null = null;
  if (header.keyring) {
    if (!entry) throw backupRefused('the archive is truncated (no keyring)');
    expect(entry.name, MEMBER.keyring, i - 1);
    keyringText = await readSmall(entry, 64 * 1024);
    try {
      parseKeyringEntries(keyringFileEntries(keyringText.toString('utf8')));
    } catch (e) {
      throw backupRefused(`the archive's keyring is invalid: ${(e as KeyringError).message}`);
    }
    entry = await next();
  }
  const dumpParts: Array<{ bytes: number; sha256: string }> = [];
  const whole = createHash('sha256');
  while (entry && DUMP_PART.test(entry.name)) {
    expect(entry.name, MEMBER.dumpPart(dumpParts.length), i - 1);
    const d = digesting(entry.body);
    for await (const c of d.body) whole.update(c);
    dumpParts.push({ bytes: d.state.bytes, sha256: d.state.sha256 });
    entry = await next();
  }
  const objects: Array<{ bytes: number; sha256: string }> = [];
  while (entry && OBJECT.test(entry.name)) {
    expect(entry.name, MEMBER.object(objects.length), i - 1);
    const d = digesting(entry.body);
    for await (const _ of d.body) void _;
    objects.push({ bytes: d.state.bytes, sha256: d.state.sha256 });
    entry = await next();
  }
  if (!entry) throw backupRefused('the archive is truncated (no manifest)');
  expect(entry.name, MEMBER.manifest, i - 1);
  const manifest = parseManifest(await readSmall(entry, MAX_MANIFEST));
  if (await next()) throw backupRefused('the archive has members after its manifest');

  const mismatch = (what: string) =>
    backupRefused(`the archive does not match its manifest (${what}); nothing was restored`);
  if (JSON.stringify(manifest.schema) !== JSON.stringify(header.schema)) throw mismatch('schema');
  if (
    manifest.database.parts.length !== dumpParts.length ||
    manifest.database.parts.some(
      (p, k) => p.bytes !== dumpParts[k]!.bytes || p.sha256 !== dumpParts[k]!.sha256,
    ) ||
    manifest.database.sha256 !== whole.digest('hex') ||
    manifest.counts.dump_parts !== dumpParts.length ||
    manifest.counts.dump_bytes !== dumpParts.reduce((n, p) => n + p.bytes, 0) ||
    manifest.database.bytes !== manifest.counts.dump_bytes
  )
    throw mismatch('database dump');
  if (
    manifest.objects.length !== objects.length ||
    manifest.objects.some((r, k) => r.bytes !== objects[k]!.bytes || r.sha256 !== objects[k]!.sha256) ||
    manifest.counts.objects !== objects.length ||
    manifest.counts.object_bytes !== objects.reduce((n, p) => n + p.bytes, 0)
  )
    throw mismatch('objects');
  if (
    (manifest.keyring === null) !== (keyringText === null) ||
    (keyringText && manifest.keyring!.sha256 !== sha256(keyringText)) ||
    manifest.counts.keyring_keys !== (manifest.keyring?.key_ids.length ?? 0)
  )
    throw mismatch('keyring');
  if (dumpParts.length === 0) throw backupRefused('the archive holds no database dump');
  return { header, headerSha: sha256(headerText), manifest, keyringText, pending };
}

async function writeAll(input: Writable, chunks: AsyncIterable<Buffer>): Promise<void> {
  for await (const c of chunks)
    if (!input.write(c))
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          input.off('drain', done);
          input.off('close', done);
          input.off('error', reject);
          resolve();
        };
        input.once('drain', done);
        input.once('close', done);
        input.once('error', reject);
      });
}

/** The restore target: an empty database (refused otherwise, no --force) and an empty bucket. */
async function checkTargets(env: BackupEnv): Promise<number> {
  const ds = createDataSource({ url: env.MANGO_DATABASE_URL, poolSize: 1, applicationName: 'mango-restore' });
  await ds.initialize();
  let contents;
  try {
    contents = await databaseContents(ds);
  } finally {
    await ds.destroy();
  }
  if (contents.userObjects > 0 || contents.extraSchemas.length)
    throw targetNotEmpty(
      `the database is not empty (${contents.userObjects} tables, types or functions` +
        `${contents.extraSchemas.length ? `; schemas ${contents.extraSchemas.join(', ')}` : ''}): restore into a ` +
        'new, empty database (CREATE DATABASE …; then point MANGO_DATABASE_URL at it); nothing was restored',
    );
  await assertEmptyBucket(objectStoreOf(env));
  return contents.serverMajor;
}

/**
 * `mango restore`: verifies the whole archive first (pass 1: nothing written), then restores it (pass 2)
 * into an empty database with pg_restore and an empty bucket, checking every digest again as it writes,
 * and writes the archive's keyring to `keyringOut`. Temporal is not restored: the Session sweeper
 * restarts running Sessions' workflows from their logs (ADR 0016).
 */
export async function runRestore(o: RestoreOptions): Promise<RestoreSummary> {
  const steps: StepTiming[] = [];
  const progress = o.progress ?? (() => undefined);
  if (
    o.keyringOut &&
    (await stat(o.keyringOut).then(
      () => true,
      () => false,
    ))
  )
    throw backupRefused(`${o.keyringOut} exists: choose a new file for the keyring (never overwritten)`);
  if (!o.verifyOnly && !o.env) throw backupRefused('the restore target is not configured');

  let t = Date.now();
  let pgRestore: PgTool | undefined;
  const verified = await verifyArchive(o, async (header) => {
    // Before reading the rest: the target must be empty and a pg_restore able to read the dump present.
    if (o.verifyOnly) return;
    const serverMajor = await checkTargets(o.env!);
    pgRestore = await findPgTool(
      'pg_restore',
      Math.max(header.database.pg_dump_major, serverMajor),
      o.processEnv,
      `the dump was written by pg_dump ${header.database.pg_dump_major} and the target server is PostgreSQL ${serverMajor}`,
    );
  });
  steps.push({ step: 'verify archive', ms: Date.now() - t });
  progress(
    `verified: ${verified.manifest.counts.dump_bytes} dump bytes, ${verified.manifest.counts.objects} objects ` +
      `(${verified.manifest.counts.object_bytes} bytes), keyring ${verified.manifest.keyring?.key_ids.join(', ') ?? 'none'}\n`,
  );
  const summary = (written: string | null): RestoreSummary => ({
    created_at: verified.header.created_at,
    schema: verified.header.schema,
    counts: verified.manifest.counts,
    vanished: verified.manifest.vanished.length,
    pending_migrations: verified.pending,
    keyring_key_ids: verified.manifest.keyring?.key_ids ?? [],
    keyring_written: written,
    steps,
  });
  if (o.verifyOnly) return summary(null);

  // Pass 2. The archive was verified; if it changes under us now, the digests below catch it (and the
  // targets, which were empty, must be emptied again).
  const env = o.env!;
  const store = objectStoreOf(env);
  const it = members(o.in, o.open);
  const first = await it.next();
  if (first.done || sha256(await readSmall(first.value, MAX_JSON_MEMBER)) !== verified.headerSha)
    throw backupRefused('the archive changed since it was verified; the targets are untouched');
  t = Date.now();
  const db = restoreDatabase(pgRestore!, pgConnectionEnv(env.MANGO_DATABASE_URL));
  const whole = createHash('sha256');
  let objectIndex = 0;
  let dbDone = false;
  const finishDatabase = async () => {
    if (dbDone) return;
    dbDone = true;
    db.input.end();
    await db.done;
    if (whole.digest('hex') !== verified.manifest.database.sha256)
      throw backupRefused('the dump changed since the archive was verified: drop the restored database');
    steps.push({ step: 'database restore', ms: Date.now() - t });
    progress('database restored\n');
    t = Date.now();
  };
  try {
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const entry = r.value;
      if (DUMP_PART.test(entry.name)) {
        await writeAll(
          db.input,
          (async function* () {
            for await (const c of entry.body) {
              whole.update(c);
              yield c;
            }
          })(),
        );
      } else if (OBJECT.test(entry.name)) {
        await finishDatabase();
        await putObject(store, verified.manifest.objects[objectIndex++]!, entry.body);
      } else if (entry.name === MEMBER.manifest) {
        await finishDatabase();
      }
    }
  } catch (e) {
    if (!dbDone) {
      db.input.destroy();
      await db.done.catch(() => undefined);
    }
    throw e;
  }
  steps.push({ step: 'objects restore', ms: Date.now() - t });
  progress(`objects restored: ${objectIndex}\n`);

  let written: string | null = null;
  if (o.keyringOut && verified.keyringText) {
    const handle = await open(o.keyringOut, 'wx', 0o600);
    try {
      await handle.writeFile(verified.keyringText);
    } finally {
      await handle.close();
    }
    written = o.keyringOut;
  }
  return summary(written);
}
