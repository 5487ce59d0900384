import { MangoClient } from './client';
import { json, TestServer } from './testing/test-server';

const API_KEY = 'mango_ak_test_workspace_key';
const VAULT = 'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const CRED = 'vcrd_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const stamp = '2026-12-01T00:00:00.000Z';
const vault = {
  id: VAULT,
  type: 'vault',
  display_name: 'v',
  metadata: {},
  created_at: stamp,
  updated_at: stamp,
  archived_at: null,
};
const credential = {
  id: CRED,
  type: 'vault_credential',
  vault_id: VAULT,
  display_name: null,
  metadata: {},
  auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' },
  created_at: stamp,
  updated_at: stamp,
  archived_at: null,
};

describe('client.vaults', () => {
  let server: TestServer;
  let client: MangoClient;
  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: API_KEY, maxRetries: 0 });
  });
  afterEach(() => server.close());

  it('creates a Vault and a credential with the documented paths and bodies', async () => {
    server.script(json(201, vault), json(201, credential));
    expect(await client.vaults.create({ display_name: 'v' })).toEqual(vault);
    expect(server.lastRequest).toMatchObject({ method: 'POST', path: '/v1/vaults' });
    const c = await client.vaults.credentials.create(VAULT, {
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 't' },
    });
    expect(c.auth).toEqual(credential.auth);
    expect(server.lastRequest).toMatchObject({ method: 'POST', path: `/v1/vaults/${VAULT}/credentials` });
    expect(JSON.parse(server.lastRequest.body)).toEqual({
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 't' },
    });
  });

  it('pages credentials, archives, deletes and validates', async () => {
    server.script(
      json(200, { data: [credential], next_page: 'p2' }),
      json(200, { data: [{ ...credential, id: 'vcrd_2' }], next_page: null }),
      json(200, { ...credential, archived_at: stamp }),
      json(200, { id: CRED, type: 'vault_credential_deleted' }),
      json(200, {
        type: 'vault_credential_validation',
        credential_id: CRED,
        vault_id: VAULT,
        status: 'unknown',
        has_refresh_token: false,
        mcp_probe: null,
        refresh: null,
        validated_at: stamp,
      }),
    );
    const ids: string[] = [];
    for await (const c of client.vaults.credentials.list(VAULT, { include_archived: true })) ids.push(c.id);
    expect(ids).toEqual([CRED, 'vcrd_2']);
    expect(server.requests[1]!.query.get('page')).toBe('p2');
    expect(server.requests[0]!.query.get('include_archived')).toBe('true');
    expect((await client.vaults.credentials.archive(VAULT, CRED)).archived_at).toBe(stamp);
    expect(await client.vaults.credentials.delete(VAULT, CRED)).toEqual({
      id: CRED,
      type: 'vault_credential_deleted',
    });
    expect((await client.vaults.credentials.mcpOAuthValidate(VAULT, CRED)).status).toBe('unknown');
    expect(server.lastRequest).toMatchObject({
      method: 'POST',
      path: `/v1/vaults/${VAULT}/credentials/${CRED}/mcp_oauth_validate`,
    });
  });
});
