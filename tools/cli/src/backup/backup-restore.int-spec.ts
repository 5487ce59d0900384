import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ObjectStore } from '@mango/adapter-object-store';
import { createDataSource, databaseContents, SCHEMA_LEVEL } from '@mango/persistence';
import { generateKeyringEntry } from '@mango/platform-secrets';
import {
  createEmptyDatabase,
  createTestDatabase,
  dropBucket,
  freshBucketEnv,
  TestDatabase,
} from '@mango/testing';
import { main } from '../main';
import { decryptStream, encryptStream, newIdentity } from './encryption';

/**
 * `mango backup` / `mango restore` against real PostgreSQL and S3 (versitygw), in-process: a round trip,
 * and every bad input refused with a clear message and nothing restored.
 */
const OBJECTS: Record<string, string> = {
  'workspaces/w/files/file_1': 'hello object one',
  'workspaces/w/memory_stores/m/versions/v1': 'a memory, version one',
  'workspaces/w/skills/s/versions/1.tar.gz': 'x'.repeat(300_000),
};

const dir = mkdtempSync(join(tmpdir(), 'mango-backup-'));
let n = 0;
const file = (name: string) => join(dir, `${n++}-${name}`);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function storeOf(s3: Record<string, string>) {
  return new ObjectStore({
    endpoint: s3.MANGO_S3_ENDPOINT!,
    accessKey: s3.MANGO_S3_ACCESS_KEY!,
    secretKey: s3.MANGO_S3_SECRET_KEY!,
    region: s3.MANGO_S3_REGION!,
    bucket: s3.MANGO_S3_BUCKET!,
  });
}

async function objectDigests(s3: Record<string, string>): Promise<Record<string, string>> {
  const store = storeOf(s3);
  if (!(await store.client.bucketExists(store.bucket))) return {};
  const out: Record<string, string> = {};
  for await (const o of store.client.listObjectsV2(store.bucket, '', true)) {
    const chunks: Buffer[] = [];
    for await (const c of await store.client.getObject(store.bucket, o.name!)) chunks.push(c as Buffer);
    out[o.name!] = sha(Buffer.concat(chunks));
  }
  return out;
}

async function userObjects(url: string): Promise<number> {
  const ds = createDataSource({ url, poolSize: 1 });
  await ds.initialize();
  try {
    return (await databaseContents(ds)).userObjects;
  } finally {
    await ds.destroy();
  }
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const ds = createDataSource({ url, poolSize: 1 });
  await ds.initialize();
  try {
    return (await ds.query(sql)) as T[];
  } finally {
    await ds.destroy();
  }
}

describe('mango backup / restore (real PostgreSQL and S3)', () => {
  const keyring = `${generateKeyringEntry('k2027a')},${generateKeyringEntry('k2026b')}`;
  const s3 = freshBucketEnv('bk-src');
  let source: TestDatabase;
  const targets: Array<{ db: TestDatabase; s3: Record<string, string> }> = [];
  let id: { identity: string; recipient: string };
  let identityFile: string;
  let archive: string;
  let backup: { code: number; out: string; err: string };

  const run = async (argv: string[], env: Record<string, string | undefined>) => {
    let out = '';
    let err = '';
    const code = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), env });
    return { code, out, err };
  };
  const sourceEnv = () => ({
    PATH: process.env.PATH,
    MANGO_DATABASE_URL: source.url,
    MANGO_KEYRING: keyring,
    ...s3,
  });
  const freshTarget = async () => {
    const t = { db: await createEmptyDatabase('bk-dst'), s3: freshBucketEnv('bk-dst') };
    targets.push(t);
    return t;
  };
  const targetEnv = (t: { db: TestDatabase; s3: Record<string, string> }) => ({
    PATH: process.env.PATH,
    MANGO_DATABASE_URL: t.db.url,
    ...t.s3,
  });
  const untouched = async (t: { db: TestDatabase; s3: Record<string, string> }) => {
    expect(await userObjects(t.db.url)).toBe(0);
    expect(await objectDigests(t.s3)).toEqual({});
  };

  beforeAll(async () => {
    source = await createTestDatabase('bk-src');
    await query(
      source.url,
      `INSERT INTO workspaces (id, name) VALUES ('wrkspc_backup', 'backup drill') ON CONFLICT DO NOTHING`,
    ).catch(() => undefined);
    const store = storeOf(s3);
    await store.ensureBucket();
    for (const [key, body] of Object.entries(OBJECTS))
      await store.client.putObject(store.bucket, key, Buffer.from(body), Buffer.byteLength(body), {
        'Content-Type': 'text/plain',
      });
    id = await newIdentity();
    identityFile = file('identity.txt');
    writeFileSync(identityFile, `${id.identity}\n`, { mode: 0o600 });
    archive = file('backup.age');
    backup = await run(['backup', '--out', archive, '--recipient', id.recipient, '--json'], sourceEnv());
  });
  afterAll(async () => {
    for (const t of targets) {
      await t.db.drop();
      await dropBucket(t.s3);
    }
    await source?.drop();
    await dropBucket(s3);
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up every object and the keyring while the source keeps its data', () => {
    expect(backup).toMatchObject({ code: 0 });
    expect(JSON.parse(backup.out).counts).toMatchObject({ objects: 3, keyring_keys: 2 });
  });

  it('the archive is age ciphertext: no object byte, key id or key in clear', () => {
    const bytes = readFileSync(archive);
    expect(bytes.subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    for (const needle of [
      'hello object one',
      'k2027a',
      keyring.split(',')[0]!.split(':')[1]!,
      'workspaces/w/files',
    ])
      expect(bytes.includes(Buffer.from(needle))).toBe(false);
  });

  it('restores every row, object and the keyring into an empty database and bucket', async () => {
    const t = await freshTarget();
    const keyringOut = file('keyring.txt');
    const r = await run(
      ['restore', '--in', archive, '--identity', identityFile, '--keyring-out', keyringOut, '--json'],
      targetEnv(t),
    );
    expect(r.err).not.toMatch(/mango:/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      pending_migrations: [],
      keyring_key_ids: ['k2027a', 'k2026b'],
    });
    // Every table's rows compare equal (a digest of each table's ordered JSON).
    const tables = await query<{ tablename: string }>(
      source.url,
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThan(20);
    const digest = async (url: string) => {
      const out: Record<string, string> = {};
      for (const { tablename } of tables) {
        const [row] = await query<{ d: string }>(
          url,
          `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS d FROM "${tablename}" t`,
        );
        out[tablename] = row!.d;
      }
      return out;
    };
    expect(await digest(t.db.url)).toEqual(await digest(source.url));
    expect(await objectDigests(t.s3)).toEqual(await objectDigests(s3));
    expect(Object.keys(await objectDigests(t.s3)).sort()).toEqual(Object.keys(OBJECTS).sort());
    // The keyring file opens as MANGO_KEYRING_FILE with the same keys, active first, mode 0600.
    expect(readFileSync(keyringOut, 'utf8').trim().split('\n')).toEqual(keyring.split(','));
  });

  it('verifies an archive without any target (--verify-only)', async () => {
    const r = await run(['restore', '--in', archive, '--identity', identityFile, '--verify-only'], {
      PATH: process.env.PATH,
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/the archive verifies/);
  });

  it('refuses a wrong identity with a clear error and restores nothing', async () => {
    const t = await freshTarget();
    const other = file('other-identity.txt');
    writeFileSync(other, `${(await newIdentity()).identity}\n`);
    const r = await run(['restore', '--in', archive, '--identity', other], targetEnv(t));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/does not open with the given identity or passphrase/);
    await untouched(t);
  });

  it('refuses a wrong passphrase, and encrypts to a passphrase from a file (never an argument)', async () => {
    const pass = file('pass.txt');
    writeFileSync(pass, 'correct horse battery staple\n', { mode: 0o600 });
    const byPassphrase = file('backup-pass.age');
    expect((await run(['backup', '--out', byPassphrase, '--passphrase-file', pass], sourceEnv())).code).toBe(
      0,
    );
    const t = await freshTarget();
    const r = await run(['restore', '--in', byPassphrase], {
      ...targetEnv(t),
      MANGO_BACKUP_PASSPHRASE: 'incorrect horse battery',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/does not open with the given identity or passphrase/);
    expect(r.err).not.toMatch(/horse/);
    await untouched(t);
    const ok = await run(['restore', '--in', byPassphrase, '--passphrase-file', pass, '--verify-only'], {
      PATH: process.env.PATH,
    });
    expect(ok.code).toBe(0);
  });

  it.each([
    ['truncated', (b: Buffer) => b.subarray(0, Math.floor(b.length / 2)), /truncated|damaged|tampered/],
    [
      'cut just before its last chunk ends',
      (b: Buffer) => b.subarray(0, b.length - 1),
      /damaged, truncated or tampered/,
    ],
    [
      'with one byte flipped in the middle',
      (b: Buffer) => {
        const c = Buffer.from(b);
        c[Math.floor(c.length / 2)]! ^= 1;
        return c;
      },
      /damaged, truncated or tampered/,
    ],
    [
      'with a byte flipped in its header',
      (b: Buffer) => {
        const c = Buffer.from(b);
        c[40]! ^= 1;
        return c;
      },
      /tampered|does not open|not a valid age file/,
    ],
  ])('refuses an archive %s and restores nothing', async (_label, damage, message) => {
    const bad = file('bad.age');
    writeFileSync(bad, damage(readFileSync(archive)));
    const t = await freshTarget();
    const r = await run(['restore', '--in', bad, '--identity', identityFile], targetEnv(t));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    await untouched(t);
  });

  it('refuses an archive re-encrypted to the recipient whose bytes do not match its manifest', async () => {
    // Anyone with the recipient (a public key) can encrypt; the manifest digests still catch a changed member.
    const plain = Buffer.concat(
      await (
        await decryptStream(Readable.from([readFileSync(archive)]), {
          identities: [id.identity],
          passphrases: [],
        })
      ).toArray(),
    );
    const at = plain.indexOf('hello object one');
    expect(at).toBeGreaterThan(0);
    plain.write('HELLO', at);
    const forged = file('forged.age');
    writeFileSync(
      forged,
      Buffer.concat(
        await (await encryptStream(Readable.from([plain]), { recipients: [id.recipient] })).toArray(),
      ),
    );
    const t = await freshTarget();
    const r = await run(['restore', '--in', forged, '--identity', identityFile], targetEnv(t));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/does not match its manifest \(objects\); nothing was restored/);
    await untouched(t);
  });

  it('refuses a database that is not empty, and a bucket that is not empty, touching neither', async () => {
    const t = await freshTarget();
    await query(t.db.url, 'CREATE TABLE keep_me (id int)');
    const r = await run(['restore', '--in', archive, '--identity', identityFile], targetEnv(t));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /the database is not empty \(1 tables, types or functions\): restore into a new, empty database/,
    );
    expect(await objectDigests(t.s3)).toEqual({});

    const u = await freshTarget();
    const store = storeOf(u.s3);
    await store.ensureBucket();
    await store.client.putObject(store.bucket, 'stray', Buffer.from('x'), 1);
    const r2 = await run(['restore', '--in', archive, '--identity', identityFile], targetEnv(u));
    expect(r2.code).toBe(1);
    expect(r2.err).toMatch(/the bucket \S+ is not empty .*nothing was restored/);
    expect(await userObjects(u.db.url)).toBe(0);
  });

  it('refuses a backup of a schema a newer release contracted, with the start-up check’s message', async () => {
    const newer = await createTestDatabase('bk-newer');
    try {
      await query(newer.url, `UPDATE schema_compatibility SET min_code_level = ${SCHEMA_LEVEL + 1}`);
      await query(
        newer.url,
        `INSERT INTO mango_migrations ("timestamp", name) VALUES (1999999999999, 'DropSomething1999999999999')`,
      );
      const out = file('newer.age');
      const b = await run(['backup', '--out', out, '--recipient', id.recipient], {
        ...sourceEnv(),
        MANGO_DATABASE_URL: newer.url,
      });
      expect(b.code).toBe(0);
      const t = await freshTarget();
      const r = await run(['restore', '--in', out, '--identity', identityFile], targetEnv(t));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(
          `refusing to restore: the database schema needs level ${SCHEMA_LEVEL + 1} and this build understands level ${SCHEMA_LEVEL} \\(migrated by a newer release: DropSomething1999999999999\\)`,
        ),
      );
      await untouched(t);
    } finally {
      await newer.drop();
    }
  });

  it('says which pg_dump it needs when none of the server’s major is found, and never overwrites a file', async () => {
    const r = await run(['backup', '--out', file('x.age'), '--recipient', id.recipient], {
      ...sourceEnv(),
      MANGO_PG_BIN_DIR: '/nonexistent',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /pg_dump of PostgreSQL \d+ or newer is needed .* postgresql-client-\d+\) or set MANGO_PG_BIN_DIR/,
    );
    const again = await run(['backup', '--out', archive, '--recipient', id.recipient], sourceEnv());
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/exists: choose a new file/);
  });

  it('takes no key on the command line: a passphrase is refused as an option', async () => {
    const r = await run(
      ['backup', '--out', file('y.age'), '--passphrase', 'correct horse battery staple'],
      sourceEnv(),
    );
    expect(r.code).toBe(2);
  });
});
