import { createEmptyDatabase, TestDatabase } from '@mango/testing';
import { MIGRATIONS } from '@mango/persistence';
import { Client } from 'pg';
import { main, normalizeArgs } from './main';

function run(db: TestDatabase, argv: string[]) {
  let out = '';
  let err = '';
  return main(argv, {
    out: (s) => (out += s),
    err: (s) => (err += s),
    env: { MANGO_DATABASE_URL: db.url },
  }).then((code) => ({ code, out, err }));
}

describe('mango CLI (real PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyDatabase('cli');
  });
  afterAll(() => db.drop());

  it('accepts the documented single-dash long options', () => {
    expect(normalizeArgs(['api-key', 'create', '-workspace', 'w', '-label=x', '-h'])).toEqual([
      'api-key',
      'create',
      '--workspace',
      'w',
      '--label=x',
      '-h',
    ]);
  });

  it('migrates, then creates a Workspace key shown once and stored only as a digest', async () => {
    expect((await run(db, ['migrate'])).out).toMatch(new RegExp(`applied ${MIGRATIONS.length} migration`));
    expect((await run(db, ['migrate'])).out).toMatch(/up to date/);
    const created = await run(db, [
      'api-key',
      'create',
      '-workspace',
      'wrkspc_default',
      '-label',
      'ops',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key.api_key).toMatch(/^mango_ak_/);
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query('SELECT * FROM api_keys');
      expect(JSON.stringify(rows.rows)).not.toContain(key.api_key);
      expect(rows.rows[0].digest).toHaveLength(32);
    } finally {
      await client.end();
    }
    const listed = await run(db, ['api-key', 'list', '-workspace', 'wrkspc_default']);
    expect(listed.out).toContain(key.id);
    expect(listed.out).not.toContain(key.api_key);
    const revoked = await run(db, ['api-key', 'revoke', '-id', key.id]);
    expect(revoked.out).toMatch(/revoked key_/);
    expect((await run(db, ['api-key', 'list', '-workspace', 'wrkspc_default'])).out).toMatch(/revoked 20/);
  });

  it('reports bad input clearly and changes nothing', async () => {
    const unknownWs = await run(db, ['api-key', 'create', '-workspace', 'wrkspc_nope', '-label', 'x']);
    expect(unknownWs.code).toBe(1);
    expect(unknownWs.err).toMatch(/workspace wrkspc_nope not found/);
    const unknownEnv = await run(db, [
      'api-key',
      'create',
      '-workspace',
      'wrkspc_default',
      '-environment',
      'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      '-label',
      'x',
    ]);
    expect(unknownEnv.err).toMatch(/environment env_01JD2Y3QX9V5M8K7R6T4W2P0AB not found/);
    const missingLabel = await run(db, ['api-key', 'create', '-workspace', 'wrkspc_default']);
    expect(missingLabel.code).toBe(2);
    expect(missingLabel.err).toMatch(/--label/);
    const keys = await run(db, ['api-key', 'list', '-workspace', 'wrkspc_default', '--json']);
    expect(JSON.parse(keys.out)).toHaveLength(1);
  });
});
