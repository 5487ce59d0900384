import { randomBytes } from 'node:crypto';
import { openWebhookSecret, SecretBox } from '@mango/adapter-webhooks';
import { openSecrets, sealSecrets, VaultCredentialsService, VaultsService } from '@mango/feature-vaults';
import { WebhooksService } from '@mango/feature-webhooks';
import {
  assertKeyringCoversStoredValues,
  createDataSource,
  resealStoredSecrets,
  StoredWebhookSecret,
} from '@mango/persistence';
import { Keyring, keyringFromSettings } from '@mango/platform-secrets';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { main } from './main';

const entry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('mango keyring status / rotate (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const a = entry('a');
  const b = entry('b');
  /** The older MANGO_WEBHOOK_SECRETS_KEY (hex), which sealed webhook secrets before key ids. */
  const legacy = randomBytes(32).toString('hex');
  const material = [a, b].map((e) => e.split(':')[1]!).concat(legacy);

  const cli = async (argv: string[], env: Record<string, string>) => {
    let out = '';
    let err = '';
    const code = await main(argv, {
      out: (s) => (out += s),
      err: (s) => (err += s),
      env: { MANGO_DATABASE_URL: db.url, ...env },
    });
    for (const m of material) expect(out + err).not.toContain(m);
    return { code, out, err };
  };

  /** Every stored secret, opened with `keyring` (throws if any does not open). */
  async function openAll(keyring: Keyring) {
    const creds = await ds.query('SELECT * FROM vault_credentials WHERE kek_id IS NOT NULL ORDER BY id');
    const hooks: Array<{ id: string; secrets: StoredWebhookSecret[] }> = await ds.query(
      'SELECT id, secrets FROM webhooks ORDER BY id',
    );
    return {
      vault: creds.map(
        (r: any) =>
          openSecrets(keyring, r.id, {
            kekId: r.kek_id,
            wrappedKey: r.wrapped_key,
            secretCiphertext: r.secret_ciphertext,
          })!.token,
      ),
      webhook: hooks.flatMap((h) =>
        h.secrets.map(({ expires_at: _, ...s }) => openWebhookSecret(keyring, h.id, s)),
      ),
    };
  }

  beforeAll(async () => {
    db = await createTestDatabase('cli-keyring');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('seal under A, add B as active (A still opens), rotate, all under B, drop A: everything still opens', async () => {
    // Today's settings: a keyring with A, and the older webhook key beside it.
    const old = { MANGO_KEYRING: a, MANGO_WEBHOOK_SECRETS_KEY: legacy };
    const ringA = keyringFromSettings(old)!;
    const vault = await new VaultsService(ds).create('wrkspc_default', { display_name: 'v' });
    const creds = new VaultCredentialsService(ds, ringA);
    for (let i = 0; i < 3; i++)
      await creds.create('wrkspc_default', vault.id, {
        auth: { type: 'static_bearer', mcp_server_url: `https://m${i}.example.com/mcp`, token: `token-${i}` },
      });
    const hooks = new WebhooksService(ds, { allow: [], keyring: ringA });
    const w1 = await hooks.create('wrkspc_default', {
      url: 'https://hooks.example.com/1',
      event_types: ['session.created'],
    });
    const w2 = await hooks.create('wrkspc_default', {
      url: 'https://hooks.example.com/2',
      event_types: ['session.created'],
    });
    const rotated = await hooks.rotateSecret('wrkspc_default', w2.id, {});
    // A webhook whose secret was sealed by an older version: no key id, bound to nothing.
    const w3 = await hooks.create('wrkspc_default', {
      url: 'https://hooks.example.com/3',
      event_types: ['session.created'],
    });
    const legacySecret = 'whsec_' + randomBytes(32).toString('base64');
    await ds.query('UPDATE webhooks SET secrets = $2::jsonb WHERE id = $1', [
      w3.id,
      JSON.stringify([{ sealed: new SecretBox(legacy).seal(legacySecret), expires_at: null }]),
    ]);
    const expected = {
      vault: ['token-0', 'token-1', 'token-2'],
      webhook: [w1.secret, rotated.secret, w2.secret, legacySecret],
    };
    expect(await openAll(ringA)).toEqual(expected);

    const before = await cli(['keyring', 'status', '--json'], old);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.out)).toMatchObject({
      active_key_id: 'a',
      missing_key_ids: [],
      to_reseal: 1,
      usage: [
        { store: 'vault_credentials', key_id: 'a', count: 3, bound: true },
        { store: 'webhook_secrets', key_id: 'a', count: 3, bound: true },
        { store: 'webhook_secrets', key_id: 'webhook-legacy', count: 1, bound: false },
      ],
    });
    // A keyring without A (or without the older webhook key) is refused by the check, naming the ids.
    const lacking = await cli(['keyring', 'status'], { MANGO_KEYRING: b });
    expect(lacking.code).toBe(1);
    expect(lacking.out).toMatch(/MISSING key a: 3 Vault credential\(s\), 3 webhook signing secret\(s\)/);
    expect(lacking.err).toMatch(/the keyring lacks key\(s\) a, webhook-legacy/);
    await expect(
      assertKeyringCoversStoredValues(ds, keyringFromSettings({ MANGO_KEYRING: b })),
    ).rejects.toThrow(
      /the keyring lacks key\(s\) a \(3 Vault credential\(s\), 3 webhook signing secret\(s\)\), webhook-legacy/,
    );

    // Step 1: B first (active), A and the older key kept: every value still opens; new seals use B.
    const both = { MANGO_KEYRING: `${b},${a}`, MANGO_WEBHOOK_SECRETS_KEY: legacy };
    const ringBA = keyringFromSettings(both)!;
    await assertKeyringCoversStoredValues(ds, ringBA);
    expect(await openAll(ringBA)).toEqual(expected);

    // Step 2: rotate, in batches of 2.
    const r = await cli(['keyring', 'rotate', '--batch-size', '2', '--json'], both);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      activeKeyId: 'b',
      resealed: { vault_credentials: 3, webhook_secrets: 4 },
      skipped: 0,
      unreadable: [],
      remaining: [],
    });
    expect(await ds.query('SELECT DISTINCT kek_id FROM vault_credentials')).toEqual([{ kek_id: 'b' }]);
    expect(
      await ds.query("SELECT DISTINCT s->>'kek_id' AS k FROM webhooks, jsonb_array_elements(secrets) s"),
    ).toEqual([{ k: 'b' }]);

    // Step 3: A and the older webhook key removed: everything opens with B alone.
    const onlyB = { MANGO_KEYRING: b };
    const ringB = keyringFromSettings(onlyB)!;
    await assertKeyringCoversStoredValues(ds, ringB);
    expect(await openAll(ringB)).toEqual(expected);
    const after = await cli(['keyring', 'status'], onlyB);
    expect(after.code).toBe(0);
    expect(after.out).toMatch(/key b \(active\): 3 Vault credential\(s\), 4 webhook signing secret\(s\)/);
    expect(after.out).toMatch(/0 value\(s\) to re-seal/);
    // A second run has nothing to do.
    const again = await cli(['keyring', 'rotate'], onlyB);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(
      /re-sealed 0 Vault credential\(s\) and 0 webhook signing secret\(s\) under b; .* 0 remaining/,
    );
  });

  it('a sealed value copied to another row is reported by id and left alone; every other row is re-sealed', async () => {
    const ring = keyringFromSettings({ MANGO_KEYRING: b })!;
    const vault = await new VaultsService(ds).create('wrkspc_default', { display_name: 'copy' });
    const creds = new VaultCredentialsService(ds, ring);
    const from = await creds.create('wrkspc_default', vault.id, {
      auth: { type: 'static_bearer', mcp_server_url: 'https://from.example.com/mcp', token: 'from-token' },
    });
    const to = await creds.create('wrkspc_default', vault.id, {
      auth: { type: 'static_bearer', mcp_server_url: 'https://to.example.com/mcp', token: 'to-token' },
    });
    await ds.query(
      `UPDATE vault_credentials t SET kek_id = f.kek_id, wrapped_key = f.wrapped_key, secret_ciphertext = f.secret_ciphertext
         FROM vault_credentials f WHERE f.id = $1 AND t.id = $2`,
      [from.id, to.id],
    );
    const c = entry('c');
    const r = await cli(['keyring', 'rotate'], { MANGO_KEYRING: `${c},${b}` });
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `1 row(s) hold sealed values that do not open (sealed for another row, or tampered): ${to.id}`,
    );
    expect(r.out).toMatch(
      /re-sealed 4 Vault credential\(s\) and 4 webhook signing secret\(s\) under c; 0 row\(s\) changed meanwhile \(run again\); 1 unreadable/,
    );
    expect(r.out + r.err).not.toContain('from-token');
    const [row] = await ds.query('SELECT kek_id FROM vault_credentials WHERE id = $1', [to.id]);
    expect(row.kek_id).toBe('b');
  });

  it('refuses clearly: no keyring, a bad setting, or a key in use missing from the keyring (nothing written)', async () => {
    const none = await cli(['keyring', 'rotate'], {});
    expect({ code: none.code, err: none.err }).toEqual({
      code: 1,
      err: 'mango: no keyring is configured (MANGO_KEYRING)\n',
    });
    const bad = await cli(['keyring', 'status'], { MANGO_KEYRING: 'x:abc' });
    expect(bad.err).toMatch(/MANGO_KEYRING is invalid: keyring key x must be 32 bytes/);
    const before = await ds.query('SELECT id, kek_id, wrapped_key FROM vault_credentials ORDER BY id');
    const missing = await cli(['keyring', 'rotate'], { MANGO_KEYRING: entry('d') });
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(
      /stored values are sealed under key\(s\) (b, c|c, b), which the keyring lacks/,
    );
    expect(await ds.query('SELECT id, kek_id, wrapped_key FROM vault_credentials ORDER BY id')).toEqual(
      before,
    );
    const size = await cli(['keyring', 'rotate', '--batch-size', '0'], { MANGO_KEYRING: entry('d') });
    expect(size.err).toMatch(/--batch-size must be 1–10000/);
    const gen = await cli(['keyring', 'new-key', '--id', 'k2027a'], {});
    expect(gen.out).toMatch(/^k2027a:[A-Za-z0-9+/]{43}=\n$/);
  });
  it("rotation while the apps run: a row the API re-seals between read and write keeps the API's value (skipped, not overwritten)", async () => {
    const e = entry('e');
    const f = entry('f');
    const ringE = keyringFromSettings({ MANGO_KEYRING: e })!;
    const ringFE = keyringFromSettings({ MANGO_KEYRING: `${f},${e}` })!;
    const vault = await new VaultsService(ds).create('wrkspc_default', { display_name: 'busy' });
    const cred = await new VaultCredentialsService(ds, ringE).create('wrkspc_default', vault.id, {
      auth: { type: 'static_bearer', mcp_server_url: 'https://busy.example.com/mcp', token: 'before' },
    });
    // The rows of the tests before are not needed: the busy row is the only one left.
    await ds.query('DELETE FROM vault_credentials WHERE id <> $1', [cred.id]);
    await ds.query('DELETE FROM webhooks');
    // The API's update of that credential, in its own transaction, holds the row while the rotation runs.
    const api = ds.createQueryRunner();
    await api.connect();
    await api.startTransaction();
    const next = sealSecrets(ringFE, cred.id, { token: 'after' });
    await api.query(
      'UPDATE vault_credentials SET kek_id = $2, wrapped_key = $3, secret_ciphertext = $4 WHERE id = $1',
      [cred.id, next.kekId, next.wrappedKey, next.ciphertext],
    );
    const rotation = resealStoredSecrets(ds, ringFE);
    // The rotation read the committed row (under E) and now waits for the row lock on its UPDATE.
    for (;;) {
      const [w] = await ds.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE vault_credentials SET kek_id = $2, wrapped_key = $3%'",
      );
      if (w.n > 0) break;
      await new Promise((r) => setImmediate(r));
    }
    await api.commitTransaction();
    await api.release();
    const r = await rotation;
    expect({ resealed: r.resealed.vault_credentials, skipped: r.skipped, remaining: r.remaining }).toEqual({
      resealed: 0,
      skipped: 1,
      remaining: [],
    });
    const [row] = await ds.query('SELECT * FROM vault_credentials WHERE id = $1', [cred.id]);
    expect(
      openSecrets(keyringFromSettings({ MANGO_KEYRING: f })!, row.id, {
        kekId: row.kek_id,
        wrappedKey: row.wrapped_key,
        secretCiphertext: row.secret_ciphertext,
      }),
    ).toEqual({ token: 'after' });
  });
});
