import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { McpRuntime } from '@mango/activities';
import { McpConnector } from '@mango/adapter-mcp';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import {
  OAuthRefresher,
  VaultCredentialsService,
  VaultsService,
  vaultKeyringFrom,
} from '@mango/feature-vaults';
import { createDataSource, VaultCredentialRepository } from '@mango/persistence';
import {
  createMcpTestServer,
  createTestDatabase,
  OAuthTestServer,
  startOAuthTestServer,
  TestDatabase,
} from '@mango/testing';
import type { DataSource } from 'typeorm';

/**
 * OAuth refresh of mcp_oauth credentials against a real OAuth 2.0 server (@node-oauth/oauth2-server) and a
 * real MCP server (official SDK) that accepts only the OAuth server's live access tokens.
 */
describe('mcp_oauth refresh and validation (real OAuth 2.0 server, real MCP server, PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let ds2: DataSource;
  let oauth: OAuthTestServer;
  let mcp: Server;
  let mcpUrl: string;
  const seen: string[] = [];
  const keyring = vaultKeyringFrom(`k:${randomBytes(32).toString('base64')}`)!;
  const allowlist = parseAddressAllowlist('127.0.0.1/32');
  const connector = new McpConnector({ allowlist, timeoutMs: 5000 });
  let creds: VaultCredentialsService;
  let vaultId: string;
  let turn = 0;

  beforeAll(async () => {
    db = await createTestDatabase('oauth');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    ds2 = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    oauth = await startOAuthTestServer({ accessTokenLifetime: 3600 });
    mcp = createMcpTestServer({
      accepts: (t) => {
        seen.push(t);
        return oauth.isValid(t);
      },
    });
    await new Promise<void>((r) => mcp.listen(0, '127.0.0.1', r));
    mcpUrl = `http://127.0.0.1:${(mcp.address() as { port: number }).port}/mcp`;
    creds = new VaultCredentialsService(ds, keyring, allowlist);
    vaultId = (await new VaultsService(ds).create('wrkspc_default', { display_name: 'oauth' })).id;
  }, 60_000);
  afterAll(async () => {
    mcp.close();
    await oauth.close();
    await ds.destroy();
    await ds2.destroy();
    await db.drop();
  });

  const runtime = (source: DataSource) =>
    new McpRuntime({
      dataSource: source,
      connector,
      keyring,
      refresher: new OAuthRefresher({
        credentials: new VaultCredentialRepository(source),
        keyring,
        allowlist,
      }),
    });
  const agent = () => ({
    mcp_servers: [{ type: 'url' as const, name: 'tickets', url: mcpUrl }],
    tools: [
      {
        type: 'mcp_toolset' as const,
        mcp_server_name: 'tickets',
        default_config: { enabled: true, permission_policy: { type: 'always_allow' as const } },
        configs: [],
      },
    ],
  });
  const declare = (source = ds) => runtime(source).declare(`sesn_test`, ++turn, agent() as never, [vaultId]);
  async function credential(expiresInMs: number) {
    const grant = await oauth.issue();
    const c = await creds.create('wrkspc_default', vaultId, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: mcpUrl,
        access_token: grant.access_token,
        expires_at: new Date(Date.now() + expiresInMs).toISOString(),
        refresh: {
          client_id: oauth.clientId,
          refresh_token: grant.refresh_token,
          token_endpoint: oauth.tokenEndpoint,
          token_endpoint_auth: { type: 'client_secret_basic', client_secret: oauth.clientSecret },
        },
      },
    });
    return { id: c.id, grant };
  }
  const row = async (id: string) =>
    (await ds.query('SELECT * FROM vault_credentials WHERE id = $1', [id]))[0];

  it('refreshes before expiry: the server sees the new access token; the old refresh token is spent once', async () => {
    const { id, grant } = await credential(30_000); // within the 60 s skew
    const before = oauth.refreshGrants();
    const d = await declare();
    expect(d.failures).toEqual([]);
    expect(d.tools.map((t) => t.toolName).sort()).toEqual(['big', 'echo', 'image', 'slow']);
    expect(oauth.refreshGrants()).toBe(before + 1);
    expect(seen.at(-1)).not.toBe(grant.access_token);
    expect(oauth.isValid(seen.at(-1)!)).toBe(true);
    const r = await row(id);
    expect(Date.parse(r.auth.expires_at)).toBeGreaterThan(Date.now() + 3000_000);
    expect(r.refresh_failure).toBeNull();
    expect(JSON.stringify(r.auth)).not.toContain(seen.at(-1)!);
    // Not due any more: the next listing refreshes nothing.
    await declare();
    expect(oauth.refreshGrants()).toBe(before + 1);
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it('refreshes once after a 401, and two processes racing spend the refresh token only once', async () => {
    const { id, grant } = await credential(3600_000);
    oauth.revokeAccess(grant.access_token); // the server now refuses the stored token
    const before = oauth.refreshGrants();
    const [a, b] = await Promise.all([declare(ds), declare(ds2)]);
    expect(a.failures).toEqual([]);
    expect(b.failures).toEqual([]);
    expect(a.tools.length).toBe(4);
    expect(oauth.refreshGrants()).toBe(before + 1);
    expect((await row(id)).refresh_failure).toBeNull();
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it('a failed refresh is recorded on the credential, announced as vault_credential.refresh_failed, and surfaces as mcp_authentication_failed_error', async () => {
    await ds.query(
      `INSERT INTO webhooks (id, workspace_id, url, event_types, description, metadata, secrets, created_at, updated_at)
       VALUES ('webhook_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'wrkspc_default', 'https://hooks.example.com/v', $1, null, '{}', '[]', now(), now())
       ON CONFLICT DO NOTHING`,
      [['vault_credential.refresh_failed']],
    );
    const { id, grant } = await credential(3600_000);
    oauth.revokeAccess(grant.access_token);
    oauth.revokeRefresh(grant.refresh_token);
    const d = await declare();
    expect(d.tools).toEqual([]);
    expect(d.failures).toEqual([
      {
        server: 'tickets',
        type: 'mcp_authentication_failed_error',
        message: expect.stringMatching(
          /refused the credential \(HTTP 401\); refreshing the OAuth credential failed: the token endpoint answered HTTP 400/,
        ),
      },
    ]);
    const r = await row(id);
    expect(r.refresh_failure).toMatchObject({
      type: 'failed',
      message: 'the token endpoint answered HTTP 400',
    });
    // The credential GET shows the failure (non-secret: kind, fixed message, when), never a token.
    const shown = await creds.get('wrkspc_default', vaultId, id);
    expect(shown.refresh_failure).toEqual({
      type: 'failed',
      message: 'the token endpoint answered HTTP 400',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    for (const s of [grant.access_token, grant.refresh_token, oauth.clientSecret])
      expect(JSON.stringify(shown)).not.toContain(s);
    const announced: Array<{ data: Record<string, unknown> }> = await ds.query(
      `SELECT data FROM webhook_events WHERE type = 'vault_credential.refresh_failed' AND data->>'id' = $1`,
      [id],
    );
    expect(announced.map((e) => e.data)).toEqual([
      { type: 'vault_credential.refresh_failed', id, workspace_id: 'wrkspc_default', vault_id: vaultId },
    ]);
    const v = await creds.validate('wrkspc_default', vaultId, id);
    expect(v).toMatchObject({
      type: 'vault_credential_validation',
      credential_id: id,
      status: 'invalid',
      has_refresh_token: true,
      mcp_probe: { method: 'initialize', http_response: { status_code: 401 } },
      refresh: { status: 'failed', http_response: { status_code: 400 } },
    });
    await creds.archive('wrkspc_default', vaultId, id);
  });

  /** A token endpoint that refuses the grant and echoes the posted refresh token so that it starts `at`. */
  async function echoingEndpoint(at: number): Promise<{ url: string; close(): void }> {
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += String(d)));
      req.on('end', () => {
        const posted = new URLSearchParams(raw).get('refresh_token') ?? '';
        const head = '{"error":"invalid_grant","padding":"';
        const mid = '","refresh_token":"';
        const pad = 'p'.repeat(at - head.length - mid.length);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(`${head}${pad}${mid}${posted}","more":"${'q'.repeat(200)}"}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/token`,
      close: () => server.close(),
    };
  }

  it('a token echoed across the 4,096-character cut of a shown reply leaves no fragment (redacted before the cut)', async () => {
    const refreshToken = `rt-straddle-${randomBytes(24).toString('hex')}`;
    const clientSecret = `cs-straddle-${randomBytes(12).toString('hex')}`;
    for (const before of [1, 9, 40]) {
      const endpoint = await echoingEndpoint(4096 - before);
      try {
        const c = await creds.create('wrkspc_default', vaultId, {
          auth: {
            type: 'mcp_oauth',
            mcp_server_url: `${mcpUrl}?straddle=${before}`,
            access_token: `at-straddle-${randomBytes(8).toString('hex')}`,
            expires_at: new Date(Date.now() + 1000).toISOString(),
            refresh: {
              client_id: 'c',
              refresh_token: refreshToken,
              token_endpoint: endpoint.url,
              token_endpoint_auth: { type: 'client_secret_post', client_secret: clientSecret },
            },
          },
        });
        const v = await creds.validate('wrkspc_default', vaultId, c.id);
        expect(v.refresh).toMatchObject({
          status: 'failed',
          http_response: { status_code: 400, body_truncated: true },
        });
        const shown = JSON.stringify(v);
        for (let i = 0; i + 8 <= refreshToken.length; i++)
          expect(shown).not.toContain(refreshToken.slice(i, i + 8));
        expect(shown).not.toContain(clientSecret);
        await creds.archive('wrkspc_default', vaultId, c.id);
      } finally {
        endpoint.close();
      }
    }
  });

  it('mcp_oauth_validate reports valid with the probe, and the refresh when one was due', async () => {
    const { id, grant } = await credential(10_000);
    const v = await creds.validate('wrkspc_default', vaultId, id);
    expect(v).toMatchObject({
      status: 'valid',
      has_refresh_token: true,
      mcp_probe: { method: 'initialize', http_response: { status_code: 200, body_truncated: false } },
      refresh: { status: 'succeeded', http_response: { status_code: 200 } },
    });
    const text = JSON.stringify(v);
    expect(v.refresh!.http_response!.body).toContain('"access_token":"[redacted]"');
    expect(v.refresh!.http_response!.body).toContain('"refresh_token":"[redacted]"');
    for (const s of [grant.access_token, grant.refresh_token, oauth.clientSecret, ...seen.slice(-3)])
      expect(text).not.toContain(s);
    const again = await creds.validate('wrkspc_default', vaultId, id);
    expect(again).toMatchObject({ status: 'valid', refresh: null });
    // A healthy mcp_oauth credential shows no refresh failure.
    expect((await creds.get('wrkspc_default', vaultId, id)).refresh_failure).toBeNull();
  });
});
