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

  const refresherOn = (source: DataSource, bounds?: { deadlineMs?: number; maxReplyBytes?: number }) =>
    new OAuthRefresher({ credentials: new VaultCredentialRepository(source), keyring, allowlist, bounds });

  it('refreshers in two processes while the token endpoint is slow: one request reaches it, no connection or row lock is held meanwhile, all get the new token', async () => {
    const { id, grant } = await credential(30_000); // due
    const before = oauth.tokenRequests();
    oauth.hold();
    try {
      const [a, b] = [refresherOn(ds), refresherOn(ds2)];
      const all = Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).refresh(id)));
      await oauth.untilHeld(1);
      // Both pools (4 connections each, 6 refreshers each) still serve other work, and the row is not locked.
      expect(await ds.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
      await ds2.transaction(async (tx) => {
        const locked = await tx.query('SELECT id FROM vault_credentials WHERE id = $1 FOR UPDATE NOWAIT', [
          id,
        ]);
        expect(locked).toEqual([{ id }]);
      });
      oauth.release();
      const outcomes = await all;
      expect(oauth.tokenRequests()).toBe(before + 1);
      const tokens = new Set(outcomes.map((o) => (o.status === 'succeeded' ? o.accessToken : o.status)));
      expect(tokens.size).toBe(1);
      const [token] = [...tokens];
      expect(token).not.toBe(grant.access_token);
      expect(oauth.isValid(token!)).toBe(true);
      expect(await ds.query('SELECT refresh_claim FROM vault_credentials WHERE id = $1', [id])).toEqual([
        { refresh_claim: null },
      ]);
    } finally {
      oauth.release();
    }
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it('refreshers waiting on a claim that fails take its failure: the refused refresh token is sent once', async () => {
    const { id, grant } = await credential(30_000);
    oauth.revokeRefresh(grant.refresh_token);
    const before = oauth.tokenRequests();
    // Each refresher's repository reports when it has seen another's live claim.
    let waiting = 0;
    let allWaiting!: () => void;
    const fiveWaiting = new Promise<void>((r) => (allWaiting = r));
    class Watched extends VaultCredentialRepository {
      private seen = false;
      override async claimState(cid: string) {
        const state = await super.claimState(cid);
        if (state?.claimed && !this.seen) {
          this.seen = true;
          if (++waiting === 5) allWaiting();
        }
        return state;
      }
    }
    const refresher = (source: DataSource) =>
      new OAuthRefresher({ credentials: new Watched(source), keyring, allowlist });
    oauth.hold();
    try {
      const all = Promise.all(Array.from({ length: 6 }, (_, i) => refresher(i % 2 ? ds : ds2).refresh(id)));
      await oauth.untilHeld(1);
      await fiveWaiting; // the five others are waiting on the claim
      oauth.release();
      const outcomes = await all;
      expect(outcomes.map((o) => [o.status, o.status === 'succeeded' ? '' : o.message])).toEqual(
        outcomes.map(() => ['failed', 'the token endpoint answered HTTP 400']),
      );
    } finally {
      oauth.release();
    }
    expect(oauth.tokenRequests()).toBe(before + 1);
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it('a cancelled refresh ends its claim without an outcome; the next refresh does not wait out the lease', async () => {
    const { id } = await credential(30_000);
    const before = oauth.tokenRequests();
    const version = (await row(id)).version;
    oauth.hold();
    const ac = new AbortController();
    try {
      const pending = refresherOn(ds).refresh(id, { signal: ac.signal });
      await oauth.untilHeld(1);
      ac.abort();
      expect(await pending).toEqual({
        status: 'connect_error',
        message: 'the refresh was cancelled',
        http_response: null,
      });
      expect(await row(id)).toMatchObject({
        refresh_claim: null,
        refresh_failure: null,
        version: version + 1,
      });
    } finally {
      oauth.release();
    }
    // The endpoint may still have spent the refresh token it was sent (docs/api-guide.md): the next refresh
    // reaches it at once and records whatever it answers.
    const next = await refresherOn(ds).refresh(id);
    expect(['succeeded', 'failed']).toContain(next.status);
    expect(oauth.tokenRequests()).toBe(before + 2);
    expect((await row(id)).refresh_claim).toBeNull();
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it("the MCP runtime passes the activity's cancellation to the refresh: a cancelled listing ends the token request", async () => {
    const { id } = await credential(30_000);
    oauth.hold();
    const ac = new AbortController();
    try {
      const pending = runtime(ds)
        .credentialFor(ds.manager, [vaultId], mcpUrl, ac.signal)
        .then(
          () => 'resolved',
          (e: unknown) => (e as Error).message,
        );
      await oauth.untilHeld(1);
      ac.abort();
      expect(await pending).toBe('refreshing the OAuth credential failed: the refresh was cancelled');
      expect((await row(id)).refresh_claim).toBeNull();
    } finally {
      oauth.release();
    }
    await creds.archive('wrkspc_default', vaultId, id);
  });

  it('a token endpoint that trickles its answer fails the refresh at the deadline (recorded, claim released); one that sends 50 MB fails at the cap', async () => {
    const trickle = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const tick = setInterval(() => (res.destroyed ? clearInterval(tick) : res.write(' ')), 1000);
      res.on('close', () => clearInterval(tick));
    });
    let written = 0;
    const huge = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (written < 50 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const urls: string[] = [];
    for (const s of [trickle, huge]) {
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      urls.push(`http://127.0.0.1:${(s.address() as { port: number }).port}/token`);
    }
    try {
      const make = async (endpoint: string, n: number) =>
        (
          await creds.create('wrkspc_default', vaultId, {
            auth: {
              type: 'mcp_oauth',
              mcp_server_url: `${mcpUrl}?bounded=${n}`,
              access_token: `at-bounded-${n}`,
              expires_at: new Date(Date.now() + 1000).toISOString(),
              refresh: { client_id: 'c', refresh_token: `rt-bounded-${n}`, token_endpoint: endpoint },
            },
          })
        ).id;
      const slow = await make(urls[0]!, 1);
      expect(await refresherOn(ds, { deadlineMs: 1000 }).refresh(slow)).toEqual({
        status: 'connect_error',
        message: 'the token endpoint did not answer within 1000 ms',
        http_response: null,
      });
      expect(await row(slow)).toMatchObject({
        refresh_claim: null,
        refresh_failure: {
          type: 'connect_error',
          message: 'the token endpoint did not answer within 1000 ms',
        },
      });
      const big = await make(urls[1]!, 2);
      expect(await refresherOn(ds).refresh(big)).toEqual({
        status: 'failed',
        message: 'the token endpoint answered with more than 65536 bytes',
        http_response: null,
      });
      expect(written).toBeLessThan(50 * 1024 * 1024);
      expect((await row(big)).refresh_claim).toBeNull();
      for (const c of [slow, big]) await creds.archive('wrkspc_default', vaultId, c);
    } finally {
      for (const s of [trickle, huge]) {
        s.closeAllConnections();
        s.close();
      }
    }
  });

  it('an update that would point the stored secrets at another endpoint is refused, and the next refresh still goes to the one they were issued for', async () => {
    let attacker = 0;
    const collect = createServer((_req, res) => {
      attacker += 1;
      res.end('{}');
    });
    await new Promise<void>((r) => collect.listen(0, '127.0.0.1', r));
    const collectUrl = `http://127.0.0.1:${(collect.address() as { port: number }).port}/collect`;
    try {
      const { id } = await credential(30_000);
      const before = await row(id);
      await expect(
        creds.update('wrkspc_default', vaultId, id, {
          auth: { type: 'mcp_oauth', refresh: { token_endpoint: collectUrl } },
        }),
      ).rejects.toThrow(/auth\.refresh\.token_endpoint is immutable/);
      expect(await row(id)).toEqual(before);
      const grants = oauth.refreshGrants();
      expect((await refresherOn(ds).refresh(id)).status).toBe('succeeded');
      expect(oauth.refreshGrants()).toBe(grants + 1);
      expect(attacker).toBe(0);
      await creds.archive('wrkspc_default', vaultId, id);
    } finally {
      collect.close();
    }
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
