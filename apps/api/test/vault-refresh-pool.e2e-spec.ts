import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import {
  createMcpTestServer,
  httpClient,
  HttpClient,
  OAuthTestServer,
  startOAuthTestServer,
} from '@mango/testing';
import { ApiEnv } from '../src/api.env';
import { ApiUnderTest, startApi } from './support';

/**
 * OAuth refreshes hold no pooled connection and no row lock while the token endpoint is called (issue #34):
 * apps/api at its configured pool size (ApiEnv's default), a real OAuth 2.0 server whose token endpoint is
 * held (a slow endpoint without a clock) and a real MCP server. Assertions are on ordering and counts.
 */
describe('mcp_oauth_validate against a slow token endpoint (real apps/api at its configured pool size)', () => {
  const poolSize = new ApiEnv().MANGO_DB_POOL_SIZE;
  let api: ApiUnderTest;
  let http: HttpClient;
  let oauth: OAuthTestServer;
  let mcp: Server;
  let mcpUrl: string;

  beforeAll(async () => {
    oauth = await startOAuthTestServer({ accessTokenLifetime: 3600 });
    mcp = createMcpTestServer({ accepts: (t) => oauth.isValid(t) });
    await new Promise<void>((r) => mcp.listen(0, '127.0.0.1', r));
    mcpUrl = `http://127.0.0.1:${(mcp.address() as { port: number }).port}/mcp`;
    api = await startApi('vaultpool', {
      MANGO_VAULT_KEYRING: `k:${randomBytes(32).toString('base64')}`,
      MANGO_MCP_ALLOWED_ADDRESSES: '127.0.0.1/32',
      MANGO_DB_POOL_SIZE: String(poolSize),
    });
    http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  }, 60_000);
  afterAll(async () => {
    oauth.release();
    await api?.close();
    mcp.close();
    await oauth.close();
  });

  /** An mcp_oauth credential due for a refresh (expires within the 60 s skew). */
  async function dueCredential(vault: string, n: number): Promise<string> {
    const grant = await oauth.issue();
    const res = await http.post(`/v1/vaults/${vault}/credentials`, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: `${mcpUrl}?c=${n}`,
        access_token: grant.access_token,
        expires_at: new Date(Date.now() + 30_000).toISOString(),
        refresh: {
          client_id: oauth.clientId,
          refresh_token: grant.refresh_token,
          token_endpoint: oauth.tokenEndpoint,
          token_endpoint_auth: { type: 'client_secret_basic', client_secret: oauth.clientSecret },
        },
      },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  const validate = (vault: string, id: string) =>
    http.post(`/v1/vaults/${vault}/credentials/${id}/mcp_oauth_validate`);

  it(`as many parallel validates as the pool has connections, all refreshing at once, do not stop an unrelated request; one token request per claim`, async () => {
    const vaults = [
      (await http.post('/v1/vaults', { display_name: 'pool-a' })).body.id,
      (await http.post('/v1/vaults', { display_name: 'pool-b' })).body.id,
    ];
    const creds: Array<[string, string]> = [];
    for (let i = 0; i < poolSize; i++) {
      const vault = vaults[i % 2]!;
      creds.push([vault, await dueCredential(vault, i)]);
    }
    const before = oauth.tokenRequests();
    const order: string[] = [];
    let results: Array<{ status: number; body: any }> = [];
    oauth.hold();
    try {
      const validates = Promise.all(
        creds.map(([v, c]) =>
          validate(v, c).finally(() => {
            order.push('validate answered');
          }),
        ),
      );
      // Every credential's refresh is at the token endpoint: with a connection held per refresh, this is
      // the moment the pool is empty.
      await oauth.untilHeld(poolSize);
      const unrelated = await http.get(`/v1/vaults/${vaults[0]}`);
      order.push(`unrelated ${unrelated.status}`);
      oauth.release();
      order.push('token endpoint released');
      results = await validates;
    } finally {
      oauth.release();
    }
    // The unrelated request was answered while every refresh was still at the token endpoint.
    expect(order).toEqual([
      'unrelated 200',
      'token endpoint released',
      ...creds.map(() => 'validate answered'),
    ]);
    expect(results.map((r) => [r.status, r.body.status, r.body.refresh?.status])).toEqual(
      creds.map(() => [200, 'valid', 'succeeded']),
    );
    expect(oauth.tokenRequests()).toBe(before + poolSize);
    expect(
      await api.sql('SELECT count(*)::int AS n FROM vault_credentials WHERE refresh_claim IS NOT NULL'),
    ).toEqual([{ n: 0 }]);
  }, 60_000);

  it('parallel validates of one credential while its refresh is slow: exactly one token request; all see the same valid token', async () => {
    const vault = (await http.post('/v1/vaults', { display_name: 'one' })).body.id;
    const id = await dueCredential(vault, 1000);
    const before = oauth.tokenRequests();
    const grants = oauth.refreshGrants();
    oauth.hold();
    try {
      const validates = Promise.all(Array.from({ length: poolSize }, () => validate(vault, id)));
      await oauth.untilHeld(1);
      expect((await http.get(`/v1/vaults/${vault}/credentials/${id}`)).status).toBe(200);
      oauth.release();
      const results = await validates;
      expect(results.map((r) => [r.status, r.body.status])).toEqual(results.map(() => [200, 'valid']));
      // One refresher spent the refresh token; every other one took its outcome.
      expect(
        results.filter((r) => r.body.refresh?.status === 'succeeded' && r.body.refresh.http_response).length,
      ).toBe(1);
    } finally {
      oauth.release();
    }
    expect(oauth.tokenRequests()).toBe(before + 1);
    expect(oauth.refreshGrants()).toBe(grants + 1);
  }, 60_000);
});
