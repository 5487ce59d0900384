import { randomBytes } from 'node:crypto';
import { McpConnector } from '@mango/adapter-mcp';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { VaultCredentialsService, VaultsService } from '@mango/feature-vaults';
import { createDataSource } from '@mango/persistence';
import { keyringFromSettings } from '@mango/platform-secrets';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { McpRuntime } from './mcp.activities';

describe('MCP credentials from Vaults (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const keyring = keyringFromSettings({ MANGO_KEYRING: `k1:${randomBytes(32).toString('base64')}` })!;

  beforeAll(async () => {
    db = await createTestDatabase('mcpcreds');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('sealed secrets copied from another credential row are never used: the lookup fails naming the credential', async () => {
    const vault = await new VaultsService(ds).create('wrkspc_default', { display_name: 'v' });
    const creds = new VaultCredentialsService(ds, keyring);
    const bearer = (url: string, token: string) => ({
      auth: { type: 'static_bearer', mcp_server_url: url, token },
    });
    const a = await creds.create(
      'wrkspc_default',
      vault.id,
      bearer('https://a.example.com/mcp', 'token-of-a'),
    );
    const b = await creds.create(
      'wrkspc_default',
      vault.id,
      bearer('https://b.example.com/mcp', 'token-of-b'),
    );
    const runtime = new McpRuntime({
      dataSource: ds,
      keyring,
      connector: new McpConnector({ allowlist: parseAddressAllowlist(undefined), timeoutMs: 1000 }),
    });
    expect(await runtime.credentialFor(ds.manager, [vault.id], 'https://b.example.com/mcp')).toEqual({
      id: b.id,
      kind: 'static_bearer',
      token: 'token-of-b',
    });
    await ds.query(
      `UPDATE vault_credentials t SET kek_id = f.kek_id, wrapped_key = f.wrapped_key, secret_ciphertext = f.secret_ciphertext
         FROM vault_credentials f WHERE f.id = $1 AND t.id = $2`,
      [a.id, b.id],
    );
    const lookup = runtime.credentialFor(ds.manager, [vault.id], 'https://b.example.com/mcp');
    await expect(lookup).rejects.toThrow(`the stored secrets of vault credential ${b.id} cannot be opened`);
    await expect(lookup).rejects.not.toThrow(/token-of-a/);
    expect(await runtime.credentialFor(ds.manager, [vault.id], 'https://a.example.com/mcp')).toMatchObject({
      token: 'token-of-a',
    });
  });
});
