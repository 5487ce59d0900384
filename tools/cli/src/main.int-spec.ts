import { randomBytes } from 'node:crypto';
import {
  assertKeyringCoversCredentials,
  openSecrets,
  VaultCredentialsService,
  VaultsService,
  vaultKeyringFrom,
} from '@mango/feature-vaults';
import {
  ApiUnderTest,
  createEmptyDatabase,
  createTestDatabase,
  startApi,
  TestDatabase,
} from '@mango/testing';
import {
  assertMigrationsApplied,
  createDataSource,
  MIGRATIONS,
  SCHEMA_LEVEL,
  SchemaTooNewError,
} from '@mango/persistence';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { Webhook } from 'standardwebhooks';
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

describe('mango webhook (through a real apps/api process)', () => {
  let api: ApiUnderTest;
  let env: Record<string, string>;
  const cli = (argv: string[], extra: Record<string, string> = {}) => {
    let out = '';
    let err = '';
    return main(argv, { out: (s) => (out += s), err: (s) => (err += s), env: { ...env, ...extra } }).then(
      (code) => ({ code, out, err }),
    );
  };
  beforeAll(async () => {
    api = await startApi('cli-webhooks', { MANGO_WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64') });
    env = { MANGO_API_URL: api.url, MANGO_API_KEY: (await api.issueKey('wrkspc_default')).api_key };
  });
  afterAll(() => api.close());

  it('creates (secret printed once), lists and deletes an endpoint', async () => {
    const created = await cli([
      'webhook',
      'create',
      '-url',
      'https://hooks.example.com/x',
      '-events',
      'session.created, session.status_idled',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const hook = JSON.parse(created.out);
    expect(hook).toMatchObject({ event_types: ['session.created', 'session.status_idled'] });
    expect(hook.secret).toMatch(/^whsec_/);
    const listed = await cli(['webhook', 'list']);
    expect(listed.out).toContain(
      `${hook.id}\thttps://hooks.example.com/x\tsession.created,session.status_idled\tenabled`,
    );
    expect(listed.out).not.toContain('whsec_');
    const deleted = await cli(['webhook', 'delete', '-id', hook.id]);
    expect(deleted.out).toBe(`deleted ${hook.id}\n`);
    expect((await cli(['webhook', 'list', '--json'])).out).toBe('[]\n');
  });

  it('reports API refusals and a missing key clearly', async () => {
    const bad = await cli(['webhook', 'create', '-url', 'http://10.0.0.1/', '-events', 'session.created']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/400 invalid_request_error: .*private/);
    const unknown = await cli(['webhook', 'delete', '-id', 'webhook_01JD2Y3QX9V5M8K7R6T4W2P0AB']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/404 not_found_error/);
    await expect(cli(['webhook', 'list'], { MANGO_API_KEY: '' })).rejects.toThrow(/MANGO_API_KEY/);
    const missing = await cli(['webhook', 'create', '-url', 'https://x.example.com/']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--events/);
  });
});

describe('mango webhook listen (a real HTTP receiver, signatures by the standardwebhooks library)', () => {
  it('prints each verified delivery, answers 400 to a bad signature, and stops after --count', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const old = `whsec_${randomBytes(24).toString('base64')}`;
    let out = '';
    let err = '';
    let address: string | undefined;
    const done = main(['webhook', 'listen', '-port', '0', '-secret', secret, '-secret', old, '-count', '2'], {
      out: (s) => (out += s),
      err: (s) => {
        err += s;
        address ??= /listening on (http:\/\/\S+)/.exec(err)?.[1];
      },
      env: {},
    });
    while (!address) await new Promise((r) => setTimeout(r, 20));
    const post = async (signWith: string, id: string, event: object) => {
      const body = JSON.stringify(event);
      const at = new Date();
      const signature = new Webhook(signWith).sign(id, at, body);
      return fetch(`${address}/hooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
    };
    const event = (type: string, id: string) => ({
      type: 'event',
      id: 'whe_1',
      created_at: new Date().toISOString(),
      data: { type, id, workspace_id: 'wrkspc_default' },
    });
    const forged = await post(
      `whsec_${randomBytes(24).toString('base64')}`,
      'msg_bad',
      event('session.created', 'sesn_x'),
    );
    expect(forged.status).toBe(400);
    expect(err).toMatch(/^rejected msg_bad: /m);
    expect((await post(secret, 'msg_1', event('session.created', 'sesn_a'))).status).toBe(204);
    // A secret from a rotation overlap also verifies.
    expect((await post(old, 'msg_2', event('deployment_run.succeeded', 'drun_b'))).status).toBe(204);
    expect(await done).toBe(0);
    expect(out).toBe('session.created\tsesn_a\tmsg_1\ndeployment_run.succeeded\tdrun_b\tmsg_2\n');
  });

  it('refuses to start without a secret or with a bad port', async () => {
    const cli = (argv: string[]) => {
      let err = '';
      return main(argv, { out: () => undefined, err: (s) => (err += s), env: {} }).then((code) => ({
        code,
        err,
      }));
    };
    const noSecret = await cli(['webhook', 'listen', '-port', '0']);
    expect(noSecret.code).toBe(1);
    expect(noSecret.err).toMatch(/signing secret is required/);
    const badPort = await cli(['webhook', 'listen', '-port', '70000', '-secret', 'whsec_AAAA']);
    expect(badPort.code).toBe(1);
    expect(badPort.err).toMatch(/--port must be 0–65535/);
  });
});

describe('mango vault rotate-key (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const a = `old:${randomBytes(32).toString('base64')}`;
  const b = `new:${randomBytes(32).toString('base64')}`;
  const runWith = (argv: string[], keyring?: string) => {
    let out = '';
    let err = '';
    return main(argv, {
      out: (s) => (out += s),
      err: (s) => (err += s),
      env: { MANGO_DATABASE_URL: db.url, ...(keyring === undefined ? {} : { MANGO_VAULT_KEYRING: keyring }) },
    }).then((code) => ({ code, out, err }));
  };
  beforeAll(async () => {
    db = await createTestDatabase('cli-vault');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('re-wraps every data key under the active key; old keys stay readable until it finishes', async () => {
    const oldRing = vaultKeyringFrom(a)!;
    const vault = await new VaultsService(ds).create('wrkspc_default', { display_name: 'v' });
    const creds = new VaultCredentialsService(ds, oldRing);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await creds.create('wrkspc_default', vault.id, {
        auth: { type: 'static_bearer', mcp_server_url: `https://m${i}.example.com`, token: `secret-${i}` },
      });
      ids.push(c.id);
    }
    const before = await ds.query('SELECT id, kek_id, secret_ciphertext FROM vault_credentials ORDER BY id');
    expect(before.every((r: any) => r.kek_id === 'old')).toBe(true);

    // During rotation both keys are configured (new first): every credential opens.
    const both = vaultKeyringFrom(`${b},${a}`)!;
    await assertKeyringCoversCredentials(ds, both);
    const r = await runWith(['vault', 'rotate-key', '--json'], `${b},${a}`);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ activeKeyId: 'new', rewrapped: 5, remaining: 0 });
    const after = await ds.query('SELECT id, kek_id, secret_ciphertext FROM vault_credentials ORDER BY id');
    expect(after.every((x: any) => x.kek_id === 'new')).toBe(true);
    // Only the wrapped data key changed, never the ciphertext.
    expect(after.map((x: any) => x.secret_ciphertext.toString('hex'))).toEqual(
      before.map((x: any) => x.secret_ciphertext.toString('hex')),
    );
    // Now the old key can go: the new key alone opens every secret.
    const newOnly = vaultKeyringFrom(b)!;
    await assertKeyringCoversCredentials(ds, newOnly);
    const rows = await ds.query('SELECT * FROM vault_credentials ORDER BY id');
    expect(
      rows.map((row: any) =>
        openSecrets(newOnly, row.id, {
          kekId: row.kek_id,
          wrappedKey: row.wrapped_key,
          secretCiphertext: row.secret_ciphertext,
        }),
      ),
    ).toEqual([0, 1, 2, 3, 4].map((i) => ({ token: `secret-${i}` })));
    await expect(assertKeyringCoversCredentials(ds, oldRing)).rejects.toThrow(
      /lacks key\(s\) new \(5 credential/,
    );
    // A second run has nothing to do.
    expect((await runWith(['vault', 'rotate-key'], `${b},${a}`)).out).toMatch(/re-wrapped 0 .* 0 remaining/);
    expect(r.out + r.err).not.toContain(a.split(':')[1]);
  });

  it('refuses clearly without a keyring, with a bad one, or when a key in use is missing', async () => {
    const none = await runWith(['vault', 'rotate-key']);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/MANGO_VAULT_KEYRING is not set/);
    const bad = await runWith(['vault', 'rotate-key'], 'x:abc');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/MANGO_VAULT_KEYRING is invalid: keyring key x must be 32 bytes/);
    const missing = await runWith(['vault', 'rotate-key'], `third:${randomBytes(32).toString('base64')}`);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/wrapped under key new, which is not in the keyring/);
    const rows = await ds.query('SELECT DISTINCT kek_id FROM vault_credentials');
    expect(rows).toEqual([{ kek_id: 'new' }]);
  });
});

describe('mango migrate status (real PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyDatabase('cli-status');
  });
  afterAll(() => db.drop());
  const names = MIGRATIONS.map((m) => m.name);

  it('on an empty database: every migration pending, exit 1, and nothing written', async () => {
    const r = await run(db, ['migrate', 'status', '--json']);
    expect(r.code).toBe(1);
    const status = JSON.parse(r.out);
    expect(status).toMatchObject({
      pending: names,
      applied: [],
      unknown: [],
      requiredLevel: null,
      ok: false,
    });
    expect(status.reason).toContain('run `mango migrate`');
    const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      expect(await ds.query("SELECT to_regclass('mango_migrations') AS t")).toEqual([{ t: null }]);
    } finally {
      await ds.destroy();
    }
  });

  it('after `migrate`: nothing pending, the level the build understands, exit 0', async () => {
    expect((await run(db, ['migrate'])).out).toMatch(new RegExp(`applied ${names.length} migration`));
    const r = await run(db, ['migrate', 'status']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('pending: none');
    expect(r.out).toContain(
      `schema level: database requires ${SCHEMA_LEVEL}, this build understands ${SCHEMA_LEVEL}`,
    );
    expect(r.out).toContain('this build can serve on this database\n');
  });

  it('a newer release that only expanded the schema: still served, its migration named', async () => {
    const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      await ds.query(
        "INSERT INTO mango_migrations (timestamp, name) VALUES (1899999999999, 'AddFutureColumn1899999999999')",
      );
      const r = await run(db, ['migrate', 'status', '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({
        ok: true,
        unknown: ['AddFutureColumn1899999999999'],
        newerCompatible: ['AddFutureColumn1899999999999'],
      });
      await expect(assertMigrationsApplied({ url: db.url })).resolves.toEqual([
        'AddFutureColumn1899999999999',
      ]);

      // The same release then contracts the schema: this build refuses, saying what to do.
      await ds.query('UPDATE schema_compatibility SET min_code_level = $1', [SCHEMA_LEVEL + 1]);
      const refused = await run(db, ['migrate', 'status']);
      expect(refused.code).toBe(1);
      expect(refused.out).toContain(
        `this build would refuse to start: the database schema needs level ${SCHEMA_LEVEL + 1} and this build understands level ${SCHEMA_LEVEL}`,
      );
      await expect(assertMigrationsApplied({ url: db.url })).rejects.toThrow(SchemaTooNewError);
    } finally {
      await ds.destroy();
    }
  });
});
