import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, freePort, httpClient, HttpClient, startApp } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

const keyA = `kA:${randomBytes(32).toString('base64')}`;
const keyB = `kB:${randomBytes(32).toString('base64')}`;

const SECRETS = {
  token: 'sb-token-5f1f0c6ad1b34d',
  access: 'oauth-access-9a7f1e22c4',
  refresh: 'oauth-refresh-77c1ab09e3',
  client: 'oauth-client-secret-3b6f90',
  rotated: 'sb-token-rotated-0e4c2d11',
};

const bearer = (url = 'https://mcp.example.com/mcp', token = SECRETS.token) => ({
  auth: { type: 'static_bearer', mcp_server_url: url, token },
});
const oauth = {
  display_name: 'linear',
  metadata: { team: 'platform' },
  auth: {
    type: 'mcp_oauth',
    mcp_server_url: 'https://oauth.example.com/mcp',
    access_token: SECRETS.access,
    expires_at: '2026-12-01T13:00:00Z',
    refresh: {
      client_id: 'mango-client',
      refresh_token: SECRETS.refresh,
      token_endpoint: 'https://auth.example.com/oauth/token',
      token_endpoint_auth: { type: 'client_secret_post', client_secret: SECRETS.client },
      resource: 'https://oauth.example.com/mcp',
      scope: 'tools',
    },
  },
};

function expectNoSecret(value: unknown): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const s of Object.values(SECRETS)) expect(text).not.toContain(s);
}

describe('Vaults and credentials (real apps/api process)', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  let workspaceKey: string;

  beforeAll(async () => {
    api = await startApi('vaults', { MANGO_VAULT_KEYRING: keyA });
    workspaceKey = (await api.issueKey('wrkspc_default')).api_key;
    http = httpClient(api.url, workspaceKey);
  }, 60_000);
  afterAll(() => api.close());

  it('Vault lifecycle: create, get, list, update, archive (read-only), include_archived, delete', async () => {
    const created = await http.post('/v1/vaults', { display_name: 'Team', metadata: { a: '1' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^vlt_/),
      type: 'vault',
      display_name: 'Team',
      metadata: { a: '1' },
      created_at: expect.any(String),
      updated_at: created.body.created_at,
      archived_at: null,
    });
    const id = created.body.id;
    expect((await http.get(`/v1/vaults/${id}`)).body).toEqual(created.body);
    const updated = await http.post(`/v1/vaults/${id}`, {
      display_name: 'Team 2',
      metadata: { a: null, b: '2' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ display_name: 'Team 2', metadata: { b: '2' } });
    expect((await http.get('/v1/vaults')).body.data.map((v: any) => v.id)).toContain(id);
    const archived = await http.post(`/v1/vaults/${id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    expect((await http.post(`/v1/vaults/${id}/archive`)).body.archived_at).toBe(archived.body.archived_at);
    expect((await http.get('/v1/vaults')).body.data.map((v: any) => v.id)).not.toContain(id);
    expect((await http.get('/v1/vaults?include_archived=true')).body.data.map((v: any) => v.id)).toContain(
      id,
    );
    const upd = await http.post(`/v1/vaults/${id}`, { display_name: 'x' });
    expect(upd.status).toBe(409);
    const cred = await http.post(`/v1/vaults/${id}/credentials`, bearer());
    expect(cred.status).toBe(409);
    expect(cred.body.error.message).toMatch(/archived/);
    const del = await http.delete(`/v1/vaults/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id, type: 'vault_deleted' });
    expect((await http.get(`/v1/vaults/${id}`)).status).toBe(404);
  });

  it('lists page through Vaults newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await http.post('/v1/vaults', { display_name: `p${i}` })).body.id);
    const p1 = await http.get('/v1/vaults?limit=2');
    expect(p1.body.data.map((v: any) => v.id)).toEqual([ids[2], ids[1]]);
    const p2 = await http.get(`/v1/vaults?limit=2&page=${encodeURIComponent(p1.body.next_page)}`);
    expect(p2.body.data[0].id).toBe(ids[0]);
  });

  it('credential lifecycle: secrets are write-only, sealed at rest, replaced on update, purged on archive', async () => {
    const vault = (await http.post('/v1/vaults', { display_name: 'Creds' })).body.id;
    const sb = await http.post(`/v1/vaults/${vault}/credentials`, { ...bearer(), display_name: 'prod' });
    expect(sb.status).toBe(201);
    expect(sb.body).toEqual({
      id: expect.stringMatching(/^vcrd_/),
      type: 'vault_credential',
      vault_id: vault,
      display_name: 'prod',
      metadata: {},
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
      archived_at: null,
    });
    const oa = await http.post(`/v1/vaults/${vault}/credentials`, oauth);
    expect(oa.status).toBe(201);
    expect(oa.body.auth).toEqual({
      type: 'mcp_oauth',
      mcp_server_url: 'https://oauth.example.com/mcp',
      expires_at: '2026-12-01T13:00:00.000Z',
      refresh: {
        client_id: 'mango-client',
        token_endpoint: 'https://auth.example.com/oauth/token',
        token_endpoint_auth: { type: 'client_secret_post' },
        resource: 'https://oauth.example.com/mcp',
        scope: 'tools',
      },
    });
    expectNoSecret([sb.body, oa.body]);
    const got = await http.get(`/v1/vaults/${vault}/credentials/${oa.body.id}`);
    expect(got.body).toEqual(oa.body);
    const list = await http.get(`/v1/vaults/${vault}/credentials`);
    expect(list.body.data.map((c: any) => c.id)).toEqual([oa.body.id, sb.body.id]);
    expectNoSecret(list.body);

    // At rest: only ciphertext under the keyring's active key; no plaintext anywhere in the row.
    const [row] = await api.sql(
      "SELECT *, encode(secret_ciphertext, 'escape') AS c, encode(wrapped_key, 'escape') AS w FROM vault_credentials WHERE id = $1",
      [oa.body.id],
    );
    expect(row.kek_id).toBe('kA');
    expect(row.secret_ciphertext.length).toBeGreaterThan(28);
    expectNoSecret(JSON.stringify(row) + row.secret_ciphertext.toString('latin1'));

    const before = (
      await api.sql('SELECT secret_ciphertext FROM vault_credentials WHERE id = $1', [sb.body.id])
    )[0];
    const upd = await http.post(`/v1/vaults/${vault}/credentials/${sb.body.id}`, {
      auth: { type: 'static_bearer', token: SECRETS.rotated },
      metadata: { rotated: 'yes' },
    });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ metadata: { rotated: 'yes' }, auth: sb.body.auth });
    expectNoSecret(upd.body);
    const after = (
      await api.sql('SELECT secret_ciphertext FROM vault_credentials WHERE id = $1', [sb.body.id])
    )[0];
    expect(after.secret_ciphertext.equals(before.secret_ciphertext)).toBe(false);
    // An unchanged update changes nothing (not even updated_at).
    const same = await http.post(`/v1/vaults/${vault}/credentials/${sb.body.id}`, {
      metadata: { rotated: 'yes' },
    });
    expect(same.body.updated_at).toBe(upd.body.updated_at);

    const arch = await http.post(`/v1/vaults/${vault}/credentials/${sb.body.id}/archive`);
    expect(arch.status).toBe(200);
    expect(arch.body.archived_at).toEqual(expect.any(String));
    const [purged] = await api.sql(
      'SELECT kek_id, wrapped_key, secret_ciphertext FROM vault_credentials WHERE id = $1',
      [sb.body.id],
    );
    expect(purged).toEqual({ kek_id: null, wrapped_key: null, secret_ciphertext: null });
    expect(
      (await http.post(`/v1/vaults/${vault}/credentials/${sb.body.id}`, { display_name: 'x' })).status,
    ).toBe(409);
    expect((await http.get(`/v1/vaults/${vault}/credentials`)).body.data.map((c: any) => c.id)).toEqual([
      oa.body.id,
    ]);
    expect(
      (await http.get(`/v1/vaults/${vault}/credentials?include_archived=true`)).body.data.map(
        (c: any) => c.id,
      ),
    ).toEqual([oa.body.id, sb.body.id]);
    // Archiving freed the URL.
    expect((await http.post(`/v1/vaults/${vault}/credentials`, bearer())).status).toBe(201);

    const del = await http.delete(`/v1/vaults/${vault}/credentials/${oa.body.id}`);
    expect(del.body).toEqual({ id: oa.body.id, type: 'vault_credential_deleted' });
    expect((await http.get(`/v1/vaults/${vault}/credentials/${oa.body.id}`)).status).toBe(404);
    // Deleting the Vault cascades its credentials.
    await http.delete(`/v1/vaults/${vault}`);
    expect(await api.sql('SELECT id FROM vault_credentials WHERE vault_id = $1', [vault])).toEqual([]);
  });

  describe('bad input: a clear error in the envelope, nothing changes', () => {
    let vault: string;
    let existing: string;
    beforeAll(async () => {
      vault = (await http.post('/v1/vaults', { display_name: 'Bad input' })).body.id;
      existing = (await http.post(`/v1/vaults/${vault}/credentials`, bearer())).body.id;
    });
    const rows = () => api.sql('SELECT id, updated_at, secret_ciphertext FROM vault_credentials ORDER BY id');
    const vaults = () => api.sql('SELECT id, updated_at FROM vaults ORDER BY id');

    type Case = [string, string, (v: string, c: string) => string, unknown, number, RegExp];
    const cases: Case[] = [
      ['vault without display_name', 'POST', () => '/v1/vaults', {}, 400, /display_name is required/],
      [
        'vault display_name too long',
        'POST',
        () => '/v1/vaults',
        { display_name: 'x'.repeat(256) },
        400,
        /at most 255/,
      ],
      [
        'vault unknown field',
        'POST',
        () => '/v1/vaults',
        { display_name: 'a', name: 'b' },
        400,
        /body.name: unknown field/,
      ],
      [
        'vault metadata too many keys',
        'POST',
        () => '/v1/vaults',
        {
          display_name: 'a',
          metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
        },
        400,
        /metadata/,
      ],
      ['vault bad list limit', 'GET', () => '/v1/vaults?limit=0', undefined, 400, /limit/],
      ['vault unknown query', 'GET', () => '/v1/vaults?order=asc', undefined, 400, /order/],
      [
        'vault wrong id prefix',
        'GET',
        () => '/v1/vaults/env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
        undefined,
        404,
        /not found/,
      ],
      [
        'unknown vault',
        'POST',
        () => '/v1/vaults/vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB/credentials',
        bearer('https://new.example.com'),
        404,
        /not found/,
      ],
      [
        'credential wrong id prefix',
        'GET',
        (v) => `/v1/vaults/${v}/credentials/vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB`,
        undefined,
        404,
        /not found/,
      ],
      [
        'duplicate mcp_server_url (normalised)',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        bearer('HTTPS://MCP.example.com:443/mcp/'),
        409,
        /already has mcp_server_url/,
      ],
      [
        'unknown kind',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        { auth: { type: 'basic', mcp_server_url: 'https://x' } },
        400,
        /auth.type must be one of: static_bearer, mcp_oauth/,
      ],
      [
        'environment_variable with both injection flags false',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        {
          auth: {
            type: 'environment_variable',
            secret_name: 'API_KEY',
            secret_value: 'ev-secret-value-1',
            injection_location: { header: false, body: false },
          },
        },
        400,
        /at least one of header and body must be true/,
      ],
      [
        'environment_variable (secret egress not implemented)',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        { auth: { type: 'environment_variable', secret_name: 'API_KEY', secret_value: 'ev-secret-value-2' } },
        400,
        /secret egress to the sandbox environment/,
      ],
      [
        'missing auth',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        { display_name: 'x' },
        400,
        /auth is required/,
      ],
      [
        'missing token',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        { auth: { type: 'static_bearer', mcp_server_url: 'https://n' } },
        400,
        /auth.token is required/,
      ],
      [
        'non-http url',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        bearer('ws://mcp.example.com'),
        400,
        /absolute http or https URL/,
      ],
      [
        'url with password',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        bearer('https://u:p@mcp.example.com'),
        400,
        /without user name or password/,
      ],
      [
        'client_secret_basic without client_secret',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        {
          auth: {
            ...oauth.auth,
            refresh: { ...oauth.auth.refresh, token_endpoint_auth: { type: 'client_secret_basic' } },
          },
        },
        400,
        /client_secret is required/,
      ],
      [
        'bad expires_at',
        'POST',
        (v) => `/v1/vaults/${v}/credentials`,
        { auth: { ...oauth.auth, expires_at: 'soon' } },
        400,
        /RFC 3339/,
      ],
      ['JSON array body', 'POST', (v) => `/v1/vaults/${v}/credentials`, [1], 400, /body must be an object/],
      [
        'update changes the URL',
        'POST',
        (v, c) => `/v1/vaults/${v}/credentials/${c}`,
        bearer('https://other.example.com/mcp'),
        400,
        /immutable/,
      ],
      [
        'update changes the kind',
        'POST',
        (v, c) => `/v1/vaults/${v}/credentials/${c}`,
        { auth: { type: 'mcp_oauth', access_token: 'x' } },
        400,
        /cannot change/,
      ],
      [
        'update with empty token',
        'POST',
        (v, c) => `/v1/vaults/${v}/credentials/${c}`,
        { auth: { type: 'static_bearer', token: '' } },
        400,
        /must not be empty/,
      ],
    ];

    it.each(cases)('%s → %s', async (_name, method, path, body, status, message) => {
      const [r0, v0] = [await rows(), await vaults()];
      const res = await http.request(method, path(vault, existing), body);
      expect(res.status).toBe(status);
      expect(res.body.type).toBe('error');
      expect(res.body.error.type).toBe(status === 404 ? 'not_found_error' : 'invalid_request_error');
      expect(res.body.error.message).toMatch(message);
      expect(JSON.stringify(res.body)).not.toMatch(/ev-secret-value|sb-token/);
      expect(await rows()).toEqual(r0);
      expect(await vaults()).toEqual(v0);
    });

    it('a Vault holds at most 20 active credentials; the 21st is 400; archiving one makes room', async () => {
      const v = (await http.post('/v1/vaults', { display_name: 'Full' })).body.id;
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await http.post(`/v1/vaults/${v}/credentials`, bearer(`https://mcp${i}.example.com/mcp`));
        expect(r.status).toBe(201);
        ids.push(r.body.id);
      }
      const r0 = await rows();
      const over = await http.post(`/v1/vaults/${v}/credentials`, bearer('https://mcp20.example.com/mcp'));
      expect(over.status).toBe(400);
      expect(over.body.error.message).toMatch(/at most 20 active credentials/);
      expect(await rows()).toEqual(r0);
      await http.post(`/v1/vaults/${v}/credentials/${ids[0]}/archive`);
      expect(
        (await http.post(`/v1/vaults/${v}/credentials`, bearer('https://mcp20.example.com/mcp'))).status,
      ).toBe(201);
    }, 60_000);

    it("another Workspace's key gets 404 for this Workspace's Vault and credentials, and an empty list", async () => {
      const other = httpClient(api.url, (await api.issueKey(await api.createWorkspace())).api_key);
      expect((await other.get(`/v1/vaults/${vault}`)).status).toBe(404);
      expect((await other.get(`/v1/vaults/${vault}/credentials/${existing}`)).status).toBe(404);
      expect(
        (await other.post(`/v1/vaults/${vault}/credentials`, bearer('https://x.example.com'))).status,
      ).toBe(404);
      expect((await other.delete(`/v1/vaults/${vault}`)).status).toBe(404);
      expect((await other.get('/v1/vaults')).body.data).toEqual([]);
    });
  });

  describe('a stored OAuth secret stays with the endpoint, client and resource it was issued for', () => {
    let vault: string;
    let cred: string;
    const sealedRow = async () =>
      (
        await api.sql(
          'SELECT auth, kek_id, wrapped_key, secret_ciphertext, refresh_failure, updated_at FROM vault_credentials WHERE id = $1',
          [cred],
        )
      )[0];
    beforeAll(async () => {
      vault = (await http.post('/v1/vaults', { display_name: 'Bound' })).body.id;
      cred = (await http.post(`/v1/vaults/${vault}/credentials`, oauth)).body.id;
    });

    it.each([
      [
        'token_endpoint (the measured attack)',
        { token_endpoint: 'https://attacker.example/collect' },
        'token_endpoint',
      ],
      ['client_id', { client_id: 'attacker-client' }, 'client_id'],
      ['resource', { resource: 'https://attacker.example/mcp' }, 'resource'],
      ['resource cleared', { resource: null }, 'resource'],
      [
        'token_endpoint with new secrets too',
        {
          token_endpoint: 'https://attacker.example/collect',
          refresh_token: 'oauth-refresh-new-1',
          token_endpoint_auth: { type: 'client_secret_post', client_secret: 'oauth-client-secret-new-1' },
        },
        'token_endpoint',
      ],
    ])(
      'changing %s is 400 invalid_request_error naming the field; the row is unchanged',
      async (_n, refresh, field) => {
        const before = await sealedRow();
        const res = await http.post(`/v1/vaults/${vault}/credentials/${cred}`, {
          auth: { type: 'mcp_oauth', refresh },
        });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.stringContaining(`auth.refresh.${field}`) },
          request_id: expect.any(String),
        });
        expect(res.body.error.message).toMatch(/immutable/);
        expectNoSecret(res.body);
        expect(await sealedRow()).toEqual(before);
        expect(
          (await http.get(`/v1/vaults/${vault}/credentials/${cred}`)).body.auth.refresh.token_endpoint,
        ).toBe('https://auth.example.com/oauth/token');
      },
    );

    it('rotating the secrets, the scope and the client authentication at the same endpoint is allowed', async () => {
      const before = await sealedRow();
      const res = await http.post(`/v1/vaults/${vault}/credentials/${cred}`, {
        auth: {
          type: 'mcp_oauth',
          access_token: 'oauth-access-rotated-2',
          refresh: {
            // The same binding, spelled differently, is accepted.
            token_endpoint: 'HTTPS://AUTH.example.com:443/oauth/token',
            client_id: 'mango-client',
            refresh_token: 'oauth-refresh-rotated-2',
            token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'oauth-client-secret-rot-2' },
            scope: 'tools:read',
          },
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.auth.refresh).toEqual({
        client_id: 'mango-client',
        token_endpoint: 'https://auth.example.com/oauth/token',
        token_endpoint_auth: { type: 'client_secret_basic' },
        resource: 'https://oauth.example.com/mcp',
        scope: 'tools:read',
      });
      expect(JSON.stringify(res.body)).not.toMatch(/rotated-2|rot-2/);
      const after = await sealedRow();
      expect(after.secret_ciphertext.equals(before.secret_ciphertext)).toBe(false);
    });

    it('refresh: null deletes the refresh secrets; a new configuration then names its own endpoint and secrets', async () => {
      const removed = await http.post(`/v1/vaults/${vault}/credentials/${cred}`, {
        auth: { type: 'mcp_oauth', refresh: null },
      });
      expect(removed.status).toBe(200);
      expect(removed.body.auth.refresh).toBeNull();
      const next = await http.post(`/v1/vaults/${vault}/credentials/${cred}`, {
        auth: {
          type: 'mcp_oauth',
          refresh: {
            client_id: 'mango-client-2',
            token_endpoint: 'https://auth2.example.com/oauth/token',
            refresh_token: 'oauth-refresh-new-3',
          },
        },
      });
      expect(next.status).toBe(200);
      expect(next.body.auth.refresh).toMatchObject({
        client_id: 'mango-client-2',
        token_endpoint: 'https://auth2.example.com/oauth/token',
        token_endpoint_auth: { type: 'none' },
      });
    });
  });

  it('Session create attaches Vaults (validated, stored, shown); update cannot change them', async () => {
    const agent = (await http.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await http.post('/v1/environments', { name: `e-${Date.now()}` })).body.id;
    const v1 = (await http.post('/v1/vaults', { display_name: 's1' })).body.id;
    const v2 = (await http.post('/v1/vaults', { display_name: 's2' })).body.id;
    const archived = (await http.post('/v1/vaults', { display_name: 's3' })).body.id;
    await http.post(`/v1/vaults/${archived}/archive`);
    const other = httpClient(api.url, (await api.issueKey(await api.createWorkspace())).api_key);
    const foreign = (await other.post('/v1/vaults', { display_name: 'theirs' })).body.id;

    const s = await http.post('/v1/sessions', { agent, environment_id: env, vault_ids: [v2, v1] });
    expect(s.status).toBe(201);
    expect(s.body.vault_ids).toEqual([v2, v1]);
    expect((await http.get(`/v1/sessions/${s.body.id}`)).body.vault_ids).toEqual([v2, v1]);
    expect((await http.get('/v1/sessions')).body.data.find((x: any) => x.id === s.body.id).vault_ids).toEqual(
      [v2, v1],
    );
    expect((await http.post('/v1/sessions', { agent, environment_id: env })).body.vault_ids).toEqual([]);

    const count = async () => (await api.sql('SELECT count(*)::int AS n FROM sessions'))[0].n;
    const before = await count();
    for (const [ids, message] of [
      [[foreign], `vault ${foreign} not found`],
      [['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB'], 'vault vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB not found'],
      [[archived], `vault ${archived} is archived`],
      [[v1, v1], `vault_ids lists ${v1} twice`],
      [['vault-1'], 'vault_ids[0] must be a vlt_ id'],
    ] as Array<[string[], string]>) {
      const r = await http.post('/v1/sessions', { agent, environment_id: env, vault_ids: ids });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toBe(message);
    }
    expect(await count()).toBe(before);
    const upd = await http.post(`/v1/sessions/${s.body.id}`, { vault_ids: [] });
    expect(upd.status).toBe(400);
    expect(upd.body.error.message).toMatch(/only be set when the Session is created/);
  });

  it('mcp_oauth_validate: only for mcp_oauth; a refused (loopback) server is status unknown and nothing is sent', async () => {
    const vault = (await http.post('/v1/vaults', { display_name: 'validate' })).body.id;
    const sb = (await http.post(`/v1/vaults/${vault}/credentials`, bearer())).body.id;
    const bad = await http.post(`/v1/vaults/${vault}/credentials/${sb}/mcp_oauth_validate`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/only mcp_oauth credentials/);
    const oa = (
      await http.post(`/v1/vaults/${vault}/credentials`, {
        auth: { type: 'mcp_oauth', mcp_server_url: 'http://127.0.0.1:9/mcp', access_token: SECRETS.access },
      })
    ).body.id;
    const v = await http.post(`/v1/vaults/${vault}/credentials/${oa}/mcp_oauth_validate`);
    expect(v.status).toBe(200);
    expect(v.body).toEqual({
      type: 'vault_credential_validation',
      credential_id: oa,
      vault_id: vault,
      status: 'unknown',
      has_refresh_token: false,
      mcp_probe: null,
      refresh: null,
      validated_at: expect.any(String),
    });
    await http.post(`/v1/vaults/${vault}/credentials/${oa}/archive`);
    expect((await http.post(`/v1/vaults/${vault}/credentials/${oa}/mcp_oauth_validate`)).status).toBe(409);
  });

  it('a sealed secret copied to another credential row does not open: 409 naming the credential, nothing changes, nothing leaks', async () => {
    const v = (await http.post('/v1/vaults', { display_name: 'Copy' })).body.id;
    const from = (await http.post(`/v1/vaults/${v}/credentials`, bearer('https://from.example.com/mcp'))).body
      .id;
    const to = (
      await http.post(`/v1/vaults/${v}/credentials`, bearer('https://to.example.com/mcp', SECRETS.rotated))
    ).body.id;
    // An attacker with write access to the table copies one row's sealed secrets onto another.
    await api.sql(
      `UPDATE vault_credentials t SET kek_id = f.kek_id, wrapped_key = f.wrapped_key,
              secret_ciphertext = f.secret_ciphertext
         FROM vault_credentials f WHERE f.id = $1 AND t.id = $2`,
      [from, to],
    );
    const before = await api.sql('SELECT * FROM vault_credentials WHERE id = $1', [to]);
    const r = await http.post(`/v1/vaults/${v}/credentials/${to}`, { display_name: 'renamed' });
    expect({ status: r.status, type: r.body.error?.type }).toEqual({
      status: 409,
      type: 'invalid_request_error',
    });
    expect(r.body.error.message).toMatch(
      new RegExp(`stored secrets of vault credential ${to} cannot be opened`),
    );
    expectNoSecret(r.body);
    expect(await api.sql('SELECT * FROM vault_credentials WHERE id = $1', [to])).toEqual(before);
    // The row it was copied from still works.
    const ok = await http.post(`/v1/vaults/${v}/credentials/${from}`, { display_name: 'still fine' });
    expect(ok.status).toBe(200);
    // mcp_oauth_validate opens the secrets first: a copied OAuth credential is 409 before any request.
    const oauthAt = (url: string) => ({ ...oauth, auth: { ...oauth.auth, mcp_server_url: url } });
    const o1 = (await http.post(`/v1/vaults/${v}/credentials`, oauthAt('https://o1.example.com/mcp'))).body
      .id;
    const o2 = (await http.post(`/v1/vaults/${v}/credentials`, oauthAt('https://o2.example.com/mcp'))).body
      .id;
    await api.sql(
      `UPDATE vault_credentials t SET kek_id = f.kek_id, wrapped_key = f.wrapped_key,
              secret_ciphertext = f.secret_ciphertext
         FROM vault_credentials f WHERE f.id = $1 AND t.id = $2`,
      [o1, o2],
    );
    const probe = await http.post(`/v1/vaults/${v}/credentials/${o2}/mcp_oauth_validate`);
    expect({ status: probe.status, code: probe.body.error?.details?.error_code }).toEqual({
      status: 409,
      code: 'credential_unreadable',
    });
    expectNoSecret(probe.body);
    // The operator sees it in the log, by ids only (expectNoSecret over the whole log runs below).
    expect(api.app.logs()).toMatch(new RegExp(`stored secrets of vault credential ${to} cannot be opened`));
  });

  it('never logs a secret', () => {
    expectNoSecret(api.app.logs());
    expect(api.app.logs()).not.toContain(keyA.split(':')[1]);
  });

  describe('keyring at boot', () => {
    const start = async (env: Record<string, string>) => {
      const port = await freePort();
      return startApp(
        'apps/api/src/main.ts',
        { MANGO_DATABASE_URL: api.db.url, MANGO_API_PORT: String(port), MANGO_LOG_LEVEL: 'warn', ...env },
        answers(`http://127.0.0.1:${port}/healthz`),
      );
    };

    it('refuses to start without a keyring once a credential exists, or with one lacking a key in use', async () => {
      const v = (await http.post('/v1/vaults', { display_name: 'Boot' })).body.id;
      await http.post(`/v1/vaults/${v}/credentials`, bearer('https://boot.example.com/mcp'));
      await expect(start({})).rejects.toThrow(
        /no keyring is configured .* sealed under key\(s\) kA \(\d+ Vault credential/,
      );
      await expect(start({ MANGO_VAULT_KEYRING: keyB })).rejects.toThrow(/the keyring lacks key\(s\) kA/);
      await expect(start({ MANGO_KEYRING: keyB })).rejects.toThrow(/the keyring lacks key\(s\) kA/);
      await expect(start({ MANGO_VAULT_KEYRING: 'kA:short' })).rejects.toThrow(
        /MANGO_VAULT_KEYRING is invalid/,
      );
      // With the old key kept beside a new active one, it starts, and new seals use the new key.
      const app = await start({ MANGO_VAULT_KEYRING: `${keyB},${keyA}` });
      try {
        expect(app.logs()).not.toContain(keyA.split(':')[1]);
      } finally {
        await app.stop();
      }
      // The same keys from a keyring file (MANGO_KEYRING_FILE: one entry per line, # comments).
      const dir = mkdtempSync(join(tmpdir(), 'mango-keyring-'));
      writeFileSync(join(dir, 'keyring'), `# active first\n${keyB}\n${keyA}\n`, { mode: 0o600 });
      const fromFile = await start({ MANGO_KEYRING_FILE: join(dir, 'keyring') });
      try {
        expect(fromFile.logs()).not.toContain(keyA.split(':')[1]);
      } finally {
        await fromFile.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);
  });
});

describe('Vaults without a keyring (fresh database)', () => {
  let api: ApiUnderTest;
  beforeAll(async () => {
    api = await startApi('vaults-nokey');
  }, 60_000);
  afterAll(() => api.close());

  it('Vaults work, but storing a credential is refused with the reason, and nothing is stored', async () => {
    const http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const v = await http.post('/v1/vaults', { display_name: 'No keyring' });
    expect(v.status).toBe(201);
    const c = await http.post(`/v1/vaults/${v.body.id}/credentials`, bearer());
    expect(c.status).toBe(400);
    expect(c.body.error.message).toMatch(/no keyring .*MANGO_KEYRING/);
    expect(await api.sql('SELECT id FROM vault_credentials')).toEqual([]);
  });
});

/**
 * Credential × endpoint rows for Vaults: the Workspace key reaches every operation; an Environment key
 * and a live Work token are 403 `permission_error` on every one (a Work token never reaches Vaults).
 */
describe('Vault credential matrix (real apps/api process)', () => {
  let api: ApiUnderTest;
  const creds: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await startApi('vaultcreds', { MANGO_VAULT_KEYRING: keyA });
    creds.workspace = (await api.issueKey('wrkspc_default')).api_key;
    const http = httpClient(api.url, creds.workspace);
    const agent = (await http.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await http.post('/v1/environments', { name: 'e' })).body.id;
    creds.environment = (await api.issueKey('wrkspc_default', env)).api_key;
    const supervisor = httpClient(api.url, creds.environment);
    const say = { type: 'user.message', content: [{ type: 'text', text: 'hi' }] };
    await http.post('/v1/sessions', { agent, environment_id: env, initial_events: [say] });
    const w = await supervisor.get(`/v1/environments/${env}/work/poll?block_ms=5000`);
    await supervisor.post(`/v1/environments/${env}/work/${w.body.id}/ack`);
    creds.work = JSON.parse(Buffer.from(w.body.secret, 'base64url').toString()).sessions_token;
    await httpClient(api.url, creds.work).post(
      `/v1/environments/${env}/work/${w.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    ids.vault = (await http.post('/v1/vaults', { display_name: 'm' })).body.id;
    ids.cred = (await http.post(`/v1/vaults/${ids.vault}/credentials`, bearer())).body.id;
    ids.oauth = (
      await http.post(`/v1/vaults/${ids.vault}/credentials`, {
        auth: { type: 'mcp_oauth', mcp_server_url: 'http://127.0.0.1:9/mcp', access_token: 'matrix-at' },
      })
    ).body.id;
    // Spare objects the Workspace key's destructive cells consume.
    ids.vaultToArchive = (await http.post('/v1/vaults', { display_name: 'arch' })).body.id;
    ids.vaultToDelete = (await http.post('/v1/vaults', { display_name: 'del' })).body.id;
    ids.credToArchive = (
      await http.post(`/v1/vaults/${ids.vault}/credentials`, bearer('https://a.example.com'))
    ).body.id;
    ids.credToDelete = (
      await http.post(`/v1/vaults/${ids.vault}/credentials`, bearer('https://d.example.com'))
    ).body.id;
  }, 60_000);
  afterAll(() => api.close());

  let n = 0;
  const routes: Array<[string, string, (i: Record<string, string>) => string, () => unknown]> = [
    ['POST', 'vaults.create', () => '/v1/vaults', () => ({ display_name: `v${n++}` })],
    ['GET', 'vaults.list', () => '/v1/vaults', () => undefined],
    ['GET', 'vaults.retrieve', (i) => `/v1/vaults/${i.vault}`, () => undefined],
    ['POST', 'vaults.update', (i) => `/v1/vaults/${i.vault}`, () => ({ display_name: `u${n++}` })],
    ['POST', 'vaults.archive', (i) => `/v1/vaults/${i.vaultToArchive}/archive`, () => undefined],
    ['DELETE', 'vaults.delete', (i) => `/v1/vaults/${i.vaultToDelete}`, () => undefined],
    [
      'POST',
      'vaults.credentials.create',
      (i) => `/v1/vaults/${i.vault}/credentials`,
      () => bearer(`https://c${n++}.example.com/mcp`),
    ],
    ['GET', 'vaults.credentials.list', (i) => `/v1/vaults/${i.vault}/credentials`, () => undefined],
    [
      'GET',
      'vaults.credentials.retrieve',
      (i) => `/v1/vaults/${i.vault}/credentials/${i.cred}`,
      () => undefined,
    ],
    [
      'POST',
      'vaults.credentials.update',
      (i) => `/v1/vaults/${i.vault}/credentials/${i.cred}`,
      () => ({ display_name: `d${n++}` }),
    ],
    [
      'POST',
      'vaults.credentials.archive',
      (i) => `/v1/vaults/${i.vault}/credentials/${i.credToArchive}/archive`,
      () => undefined,
    ],
    [
      'DELETE',
      'vaults.credentials.delete',
      (i) => `/v1/vaults/${i.vault}/credentials/${i.credToDelete}`,
      () => undefined,
    ],
  ];

  // Denied credentials first, so that the Workspace key's deletes come last.
  for (const cred of ['environment', 'work']) {
    it.each(routes)(`${cred}: %s %s → 403`, async (method, _op, path, body) => {
      const res = await httpClient(api.url, creds[cred]).request(method, path(ids), body());
      expect(res.status).toBe(403);
      expect(res.body.error.type).toBe('permission_error');
    });
  }
  it.each(routes)('workspace: %s %s → 2xx', async (method, _op, path, body) => {
    const res = await httpClient(api.url, creds.workspace).request(method, path(ids), body());
    expect([200, 201]).toContain(res.status);
  });
});
