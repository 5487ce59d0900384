import { checkSchema, SchemaStatus } from '@mango/persistence';
import { backupRefused } from './backup-error';

/**
 * The two JSON members of a backup archive (docs/operations.md, "Backup and restore"):
 * - `backup.json`, the first member: what a restore checks before it touches anything — the format
 *   version, when it was taken, the schema (level and migrations) and the pg_dump that wrote the dump;
 * - `manifest.json`, the last member, written once everything is read: counts, sizes and SHA-256 of the
 *   dump, of every object (with its key and content type) and of the keyring.
 * Both are parsed strictly on restore (the archive is input).
 */
export const BACKUP_FORMAT = 'mango-backup';
export const BACKUP_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  created_at: string;
  schema: { required_level: number | null; code_level: number; migrations: string[] };
  database: { pg_dump_major: number; server_major: number };
  keyring: boolean;
}

export interface ObjectRecord {
  key: string;
  bytes: number;
  sha256: string;
  content_type: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  created_at: string;
  schema: BackupHeader['schema'];
  counts: {
    dump_parts: number;
    dump_bytes: number;
    objects: number;
    object_bytes: number;
    keyring_keys: number;
  };
  database: { sha256: string; bytes: number; parts: Array<{ bytes: number; sha256: string }> };
  objects: ObjectRecord[];
  /** Objects listed and gone before they were read (deleted while the backup ran). */
  vanished: string[];
  keyring: { sha256: string; key_ids: string[] } | null;
}

/** Archive member names, in the order they are written. */
export const MEMBER = {
  header: 'backup.json',
  keyring: 'keyring.txt',
  dumpPart: (i: number) => `database/dump.${String(i).padStart(6, '0')}`,
  object: (i: number) => `objects/${String(i).padStart(8, '0')}`,
  manifest: 'manifest.json',
};
export const DUMP_PART = /^database\/dump\.(\d{6})$/;
export const OBJECT = /^objects\/(\d{8})$/;
export const isMemberName = (n: string) =>
  n === MEMBER.header || n === MEMBER.keyring || n === MEMBER.manifest || DUMP_PART.test(n) || OBJECT.test(n);

const SHA256 = /^[0-9a-f]{64}$/;
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isLevel = (v: unknown) => v === null || isCount(v);
const isNames = (v: unknown, max = 100_000): v is string[] =>
  Array.isArray(v) &&
  v.length <= max &&
  v.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 1024);

function parseJson(text: Buffer, member: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text.toString('utf8'));
  } catch {
    throw backupRefused(`the archive's ${member} is not JSON`);
  }
  if (!isObj(v)) throw backupRefused(`the archive's ${member} is not a JSON object`);
  if (v.format !== BACKUP_FORMAT) throw backupRefused(`the archive's ${member} is not a Mango backup`);
  if (v.version !== BACKUP_VERSION)
    throw backupRefused(
      `the archive is backup format version ${String(v.version).slice(0, 20)}; this build reads version ${BACKUP_VERSION}`,
    );
  return v;
}

function parseSchema(v: unknown, member: string): BackupHeader['schema'] {
  if (!isObj(v) || !isLevel(v.required_level) || !isCount(v.code_level) || !isNames(v.migrations))
    throw backupRefused(`the archive's ${member} has an invalid schema`);
  return {
    required_level: v.required_level as number | null,
    code_level: v.code_level,
    migrations: v.migrations,
  };
}

export function parseHeader(text: Buffer): BackupHeader {
  const v = parseJson(text, MEMBER.header);
  const db = v.database;
  if (
    typeof v.created_at !== 'string' ||
    !isObj(db) ||
    !isCount(db.pg_dump_major) ||
    !isCount(db.server_major) ||
    typeof v.keyring !== 'boolean'
  )
    throw backupRefused(`the archive's ${MEMBER.header} is invalid`);
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: v.created_at,
    schema: parseSchema(v.schema, MEMBER.header),
    database: { pg_dump_major: db.pg_dump_major, server_major: db.server_major },
    keyring: v.keyring,
  };
}

export function parseManifest(text: Buffer): BackupManifest {
  const v = parseJson(text, MEMBER.manifest);
  const bad = (what: string) => backupRefused(`the archive's ${MEMBER.manifest} has an invalid ${what}`);
  const c = v.counts;
  if (
    !isObj(c) ||
    !['dump_parts', 'dump_bytes', 'objects', 'object_bytes', 'keyring_keys'].every((k) => isCount(c[k]))
  )
    throw bad('counts');
  const db = v.database;
  if (
    !isObj(db) ||
    typeof db.sha256 !== 'string' ||
    !SHA256.test(db.sha256) ||
    !isCount(db.bytes) ||
    !Array.isArray(db.parts) ||
    !db.parts.every(
      (p) => isObj(p) && isCount(p.bytes) && typeof p.sha256 === 'string' && SHA256.test(p.sha256),
    )
  )
    throw bad('database');
  if (
    !Array.isArray(v.objects) ||
    !v.objects.every(
      (o) =>
        isObj(o) &&
        typeof o.key === 'string' &&
        o.key.length > 0 &&
        Buffer.byteLength(o.key) <= 1024 &&
        isCount(o.bytes) &&
        typeof o.sha256 === 'string' &&
        SHA256.test(o.sha256) &&
        typeof o.content_type === 'string' &&
        o.content_type.length <= 256 &&
        !/[\r\n\0]/.test(o.content_type),
    )
  )
    throw bad('objects list');
  if (!isNames(v.vanished, 10_000_000)) throw bad('vanished list');
  const k = v.keyring;
  if (
    k !== null &&
    !(isObj(k) && typeof k.sha256 === 'string' && SHA256.test(k.sha256) && isNames(k.key_ids, 1000))
  )
    throw bad('keyring');
  if (typeof v.created_at !== 'string') throw bad('created_at');
  const objects = v.objects as ObjectRecord[];
  const keys = new Set(objects.map((o) => o.key));
  if (keys.size !== objects.length) throw bad('objects list (a key twice)');
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: v.created_at,
    schema: parseSchema(v.schema, MEMBER.manifest),
    counts: c as BackupManifest['counts'],
    database: db as BackupManifest['database'],
    objects: objects.map(({ key, bytes, sha256, content_type }) => ({ key, bytes, sha256, content_type })),
    vanished: v.vanished,
    keyring:
      k === null
        ? null
        : { sha256: (k as { sha256: string }).sha256, key_ids: (k as { key_ids: string[] }).key_ids },
  };
}

/**
 * Whether this build may restore a backup of `schema`: the same decision as the start-up check
 * ({@link checkSchema}) on the schema the backup would restore. A schema a newer release contracted past
 * this build is refused with SchemaTooNewError's message; migrations this build has and the backup lacks
 * are not a reason to refuse (run `mango migrate` after the restore). Returns the pending migrations.
 */
export function restoreSchemaVerdict(
  schema: BackupHeader['schema'],
  knownMigrations: readonly string[],
  codeLevel: number,
): { pending: string[]; newerCompatible: string[] } {
  const applied = new Set(schema.migrations);
  const known = new Set(knownMigrations);
  const status: SchemaStatus = {
    applied: schema.migrations.map((name) => ({ name, known: known.has(name) })),
    pending: knownMigrations.filter((m) => !applied.has(m)),
    unknown: schema.migrations.filter((m) => !known.has(m)),
    requiredLevel: schema.required_level,
    codeLevel,
  };
  try {
    return { pending: status.pending, ...checkSchema({ ...status, pending: [] }) };
  } catch (e) {
    throw backupRefused(`refusing to restore: ${(e as Error).message}`);
  }
}
