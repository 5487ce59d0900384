import { randomBytes } from 'node:crypto';
import { answers, freePort, httpClient, HttpClient, startApp } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

const SECRETS_KEY = randomBytes(32).toString('base64');
const K1 = `k1:${randomBytes(32).toString('base64')}`;
const EXAMPLE = 'https://hooks.example.com/mango';

describe('Webhook endpoints over HTTP (Mango addition; real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  beforeAll(async () => {
    api = await startApi('webhooks', {
      MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY,
      MANGO_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      MANGO_VAULT_KEYRING: K1,
    });
    http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  });
  afterAll(() => api.close());

  it("Agents, Environments, Vaults and credentials announce their changes in the change's transaction", async () => {
    const types = [
      'agent.created',
      'agent.updated',
      'agent.archived',
      'environment.created',
      'environment.updated',
      'environment.archived',
      'environment.deleted',
      'vault.created',
      'vault.archived',
      'vault.deleted',
      'vault_credential.created',
      'vault_credential.archived',
      'vault_credential.deleted',
    ];
    const hook = await http.post('/v1/webhooks', { url: EXAMPLE, event_types: types });
    expect(hook.status).toBe(201);
    const since = new Date().toISOString();
    const agent = (await http.post('/v1/agents', { name: 'hooked', model: 'claude-sonnet-4-6' })).body.id;
    await http.post(`/v1/agents/${agent}`, { version: 1, system: 'v2' });
    await http.post(`/v1/agents/${agent}/archive`);
    const env = (await http.post('/v1/environments', { name: 'hooked-env' })).body.id;
    await http.post(`/v1/environments/${env}`, { description: 'v2' });
    await http.post(`/v1/environments/${env}/archive`);
    await http.delete(`/v1/environments/${env}`);
    const vault = (await http.post('/v1/vaults', { display_name: 'hooked' })).body.id;
    const cred = await http.post(`/v1/vaults/${vault}/credentials`, {
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 'tok-hooked-1' },
    });
    expect(cred.status).toBe(201);
    await http.post(`/v1/vaults/${vault}/credentials/${cred.body.id}/archive`);
    await http.delete(`/v1/vaults/${vault}/credentials/${cred.body.id}`);
    await http.post(`/v1/vaults/${vault}/archive`);
    await http.delete(`/v1/vaults/${vault}`);
    // A refused change announces nothing: an archived Agent cannot be updated.
    expect((await http.post(`/v1/agents/${agent}`, { version: 2, system: 'v3' })).status).toBe(409);

    const rows = await api.sql<{ type: string; data: Record<string, unknown> }>(
      `SELECT type, data FROM webhook_events WHERE created_at >= $1 ORDER BY id`,
      [since],
    );
    expect(rows.map((r) => r.type)).toEqual([
      'agent.created',
      'agent.updated',
      'agent.archived',
      'environment.created',
      'environment.updated',
      'environment.archived',
      'environment.deleted',
      'vault.created',
      'vault_credential.created',
      'vault_credential.archived',
      'vault_credential.deleted',
      'vault.archived',
      'vault.deleted',
    ]);
    const ids = rows.map((r) => r.data.id);
    expect(ids.slice(0, 3)).toEqual([agent, agent, agent]);
    expect(ids.slice(3, 7)).toEqual([env, env, env, env]);
    for (const r of rows.filter((x) => x.type.startsWith('vault_credential.')))
      expect(r.data).toEqual({
        type: r.type,
        id: cred.body.id,
        workspace_id: 'wrkspc_default',
        vault_id: vault,
      });
    expect(JSON.stringify(rows)).not.toContain('tok-hooked-1');
    // One pending delivery per event for the one endpoint.
    const [{ n }] = await api.sql<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1',
      [hook.body.id],
    );
    expect(Number(n)).toBe(rows.length);
    await http.delete(`/v1/webhooks/${hook.body.id}`);
  });

  it('creates (201, secret shown once and sealed at rest), lists, gets, updates, rotates and deletes', async () => {
    const created = await http.post('/v1/webhooks', {
      url: EXAMPLE,
      event_types: ['session.created', 'session.status_idled'],
      description: 'ops',
      metadata: { team: 'a' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'webhook',
      url: EXAMPLE,
      event_types: ['session.created', 'session.status_idled'],
      description: 'ops',
      metadata: { team: 'a' },
      disabled: false,
    });
    const { id, secret } = created.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    // Never stored or returned in the clear, never logged.
    const [row] = await api.sql<{ secrets: unknown }>('SELECT secrets FROM webhooks WHERE id = $1', [id]);
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    // Sealed under the keyring's active key (the Vault keyring's k1 comes before MANGO_WEBHOOK_SECRETS_KEY).
    expect(row!.secrets).toEqual([
      { kek_id: 'k1', wrapped_key: expect.any(String), ciphertext: expect.any(String), expires_at: null },
    ]);
    const got = await http.get(`/v1/webhooks/${id}`);
    expect(got.body).toEqual({ ...created.body, secret: undefined });
    expect(JSON.stringify(got.body)).not.toContain('whsec_');

    const second = (
      await http.post('/v1/webhooks', { url: 'http://127.0.0.1:9/x', event_types: ['session.deleted'] })
    ).body;
    const page1 = await http.get('/v1/webhooks?limit=1');
    expect(page1.body.data.map((w: { id: string }) => w.id)).toEqual([second.id]);
    const page2 = await http.get(`/v1/webhooks?limit=1&page=${page1.body.next_page}`);
    expect(page2.body.data.map((w: { id: string }) => w.id)).toEqual([id]);
    expect(JSON.stringify([page1.body, page2.body])).not.toContain('whsec_');

    const updated = await http.post(`/v1/webhooks/${id}`, {
      event_types: ['session.deleted'],
      disabled: true,
      description: null,
      metadata: { team: null, tier: '1' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      event_types: ['session.deleted'],
      disabled: true,
      description: null,
      metadata: { tier: '1' },
    });
    expect(updated.body.disabled_at).not.toBeNull();
    const enabled = await http.post(`/v1/webhooks/${id}`, { disabled: false });
    expect(enabled.body).toMatchObject({ disabled: false, disabled_at: null });

    const rotated = await http.post(`/v1/webhooks/${id}/rotate_secret`, { expire_previous_in_seconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(expires - Date.now()).toBeGreaterThan(50_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(60_000);
    const [afterRotate] = await api.sql<{ secrets: Array<{ expires_at: string | null }> }>(
      'SELECT secrets FROM webhooks WHERE id = $1',
      [id],
    );
    expect(afterRotate!.secrets.map((s) => s.expires_at === null)).toEqual([true, false]);
    // A rotation without overlap keeps only the new secret.
    const hard = await http.post(`/v1/webhooks/${id}/rotate_secret`, { expire_previous_in_seconds: 0 });
    expect(hard.body.previous_secret_expires_at).toBeNull();
    const [afterHard] = await api.sql<{ secrets: unknown[] }>('SELECT secrets FROM webhooks WHERE id = $1', [
      id,
    ]);
    expect(afterHard!.secrets).toHaveLength(1);
    expect((await http.post(`/v1/webhooks/${id}/rotate_secret`)).status).toBe(200);

    expect((await http.get(`/v1/webhooks/${id}/deliveries`)).body).toEqual({ data: [], next_page: null });

    const tomb = await http.delete(`/v1/webhooks/${id}`);
    expect(tomb.body).toEqual({ id, type: 'webhook_deleted' });
    expect((await http.get(`/v1/webhooks/${id}`)).status).toBe(404);
    expect((await http.delete(`/v1/webhooks/${id}`)).status).toBe(404);
    expect((await http.post(`/v1/webhooks/${id}/rotate_secret`)).status).toBe(404);
    // The delivery log of a deleted endpoint stays readable.
    expect((await http.get(`/v1/webhooks/${id}/deliveries`)).status).toBe(200);
    const [tombRow] = await api.sql<{ secrets: unknown[] }>('SELECT secrets FROM webhooks WHERE id = $1', [
      id,
    ]);
    expect(tombRow!.secrets).toEqual([]);
    expect(api.app.logs()).not.toContain('whsec_');
  });

  it.each<[string, unknown, RegExp]>([
    ['no url', { event_types: ['session.created'] }, /url is required/],
    ['no event_types', { url: EXAMPLE }, /event_types is required/],
    ['a relative url', { url: '/x', event_types: ['session.created'] }, /absolute URL/],
    ['a private address', { url: 'http://10.1.2.3/x', event_types: ['session.created'] }, /private/],
    [
      'the metadata address',
      { url: 'http://169.254.169.254/', event_types: ['session.created'] },
      /metadata/,
    ],
    [
      'an IPv6 loopback (not allowlisted)',
      { url: 'http://[::1]:8/', event_types: ['session.created'] },
      /loopback/,
    ],
    ['an empty event_types', { url: EXAMPLE, event_types: [] }, /at least 1/],
    ['an unknown event type', { url: EXAMPLE, event_types: ['session.nope'] }, /unknown event type/],
    [
      'a hosted-only type',
      { url: EXAMPLE, event_types: ['session.outcome_evaluation_ended'] },
      /does not emit/,
    ],
    [
      'an unknown field',
      { url: EXAMPLE, event_types: ['session.created'], secret: 'whsec_x' },
      /unknown field/,
    ],
    ['a non-object body', ['x'], /body must be an object/],
  ])('create refuses %s with 400 and writes nothing', async (_label, body, message) => {
    const before = await api.sql<{ n: string }>('SELECT count(*) AS n FROM webhooks');
    const res = await http.post('/v1/webhooks', body, { contract: false });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('error');
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toMatch(message);
    expect(await api.sql('SELECT count(*) AS n FROM webhooks')).toEqual(before);
  });

  it.each<[string, unknown, RegExp]>([
    ['disabled not a boolean', { disabled: 'yes' }, /disabled must be a boolean/],
    ['a private url', { url: 'http://192.168.0.1/' }, /private/],
    ['an empty event_types', { event_types: [] }, /at least 1/],
    ['an unknown field', { secret: 'x' }, /unknown field/],
  ])('update refuses %s with 400 and changes nothing', async (_label, body, message) => {
    const w = (await http.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] })).body;
    const res = await http.post(`/v1/webhooks/${w.id}`, body, { contract: false });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(message);
    const { secret: _s, ...view } = w;
    expect((await http.get(`/v1/webhooks/${w.id}`)).body).toEqual(view);
  });

  it.each<[unknown, RegExp]>([
    [{ expire_previous_in_seconds: -1 }, /at least 0/],
    [{ expire_previous_in_seconds: 604801 }, /at most 604800/],
    [{ expire_previous_in_seconds: 'soon' }, /integer/],
    [{ now: true }, /unknown field/],
  ])('rotate_secret refuses %j and keeps the secrets', async (body, message) => {
    const w = (await http.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] })).body;
    const before = await api.sql('SELECT secrets FROM webhooks WHERE id = $1', [w.id]);
    const res = await http.post(`/v1/webhooks/${w.id}/rotate_secret`, body, { contract: false });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(message);
    expect(await api.sql('SELECT secrets FROM webhooks WHERE id = $1', [w.id])).toEqual(before);
  });

  it('another API refuses to start when stored webhook secrets need a key its keyring lacks (the message names it)', async () => {
    await http.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] });
    const start = async (env: Record<string, string>) => {
      const port = await freePort();
      return startApp(
        'apps/api/src/main.ts',
        { MANGO_DATABASE_URL: api.db.url, MANGO_API_PORT: String(port), MANGO_LOG_LEVEL: 'warn', ...env },
        answers(`http://127.0.0.1:${port}/healthz`),
      );
    };
    // Only the older webhook key: the secrets sealed since (under k1, the active key then) would not open.
    await expect(start({ MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY })).rejects.toThrow(
      /the keyring lacks key\(s\) k1 \((\d+ Vault credential\(s\), )?\d+ webhook signing secret\(s\)\)/,
    );
    await expect(start({})).rejects.toThrow(/no keyring is configured .* sealed under key\(s\) k1/);
    // The same keys under the new setting start it.
    const app = await start({ MANGO_KEYRING: K1, MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY });
    try {
      expect(app.logs()).not.toContain(K1.split(':')[1]);
    } finally {
      await app.stop();
    }
  }, 90_000);

  it('unknown and malformed ids are 404; redelivering an unknown delivery is 404', async () => {
    expect((await http.get('/v1/webhooks/webhook_01JD2Y3QX9V5M8K7R6T4W2P0AB')).status).toBe(404);
    expect((await http.get('/v1/webhooks/env_01JD2Y3QX9V5M8K7R6T4W2P0AB')).status).toBe(404);
    const w = (await http.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] })).body;
    const res = await http.post(`/v1/webhooks/${w.id}/deliveries/whdlv_01JD2Y3QX9V5M8K7R6T4W2P0AB/redeliver`);
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found_error');
  });

  describe('credential × endpoint (Workspace API key only)', () => {
    const creds: Record<string, string | undefined> = {};
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      const ws = await api.issueKey('wrkspc_default');
      creds.workspace = ws.api_key;
      const h = httpClient(api.url, ws.api_key);
      ids.webhook = (
        await h.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] })
      ).body.id;
      ids.env = (await h.post('/v1/environments', { name: 'wh-creds' })).body.id;
      creds.environment = (await api.issueKey('wrkspc_default', ids.env)).api_key;
      const revoked = await api.issueKey('wrkspc_default');
      await api.revokeKey(revoked.id);
      creds.revoked = revoked.api_key;
      creds.otherWorkspace = (await api.issueKey(await api.createWorkspace())).api_key;
      creds.missing = undefined;
      creds.garbage = 'mango_ak_not-a-real-key';
    });

    const routes: Array<[string, string, (i: Record<string, string>) => string, () => unknown]> = [
      [
        'POST',
        'webhooks.create',
        () => '/v1/webhooks',
        () => ({ url: EXAMPLE, event_types: ['session.created'] }),
      ],
      ['GET', 'webhooks.list', () => '/v1/webhooks', () => undefined],
      ['GET', 'webhooks.retrieve', (i) => `/v1/webhooks/${i.webhook}`, () => undefined],
      ['POST', 'webhooks.update', (i) => `/v1/webhooks/${i.webhook}`, () => ({ description: 'd' })],
      ['POST', 'webhooks.rotate_secret', (i) => `/v1/webhooks/${i.webhook}/rotate_secret`, () => undefined],
      ['GET', 'webhooks.deliveries.list', (i) => `/v1/webhooks/${i.webhook}/deliveries`, () => undefined],
    ];
    const expected: Record<string, [number, string | null]> = {
      workspace: [0, null],
      environment: [403, 'permission_error'],
      revoked: [401, 'authentication_error'],
      garbage: [401, 'authentication_error'],
      missing: [401, 'authentication_error'],
    };
    for (const [cred, [status, type]] of Object.entries(expected)) {
      it.each(routes)(`${cred} key: %s %s`, async (method, _op, path, body) => {
        const res = await httpClient(api.url, creds[cred]).request(method, path(ids), body());
        if (status === 0) expect([200, 201]).toContain(res.status);
        else {
          expect(res.status).toBe(status);
          expect(res.body.error.type).toBe(type);
        }
      });
    }
    it.each(routes.filter(([, op]) => op !== 'webhooks.create' && op !== 'webhooks.list'))(
      "another workspace's key gets 404: %s %s",
      async (method, _op, path, body) => {
        const res = await httpClient(api.url, creds.otherWorkspace).request(method, path(ids), body());
        expect(res.status).toBe(404);
      },
    );
    it('the delete route follows the same rule', async () => {
      expect(
        (await httpClient(api.url, creds.environment).delete(`/v1/webhooks/${ids.webhook}`)).status,
      ).toBe(403);
      expect(
        (await httpClient(api.url, creds.otherWorkspace).delete(`/v1/webhooks/${ids.webhook}`)).status,
      ).toBe(404);
      expect((await httpClient(api.url, creds.otherWorkspace).get('/v1/webhooks')).body.data).toEqual([]);
      expect((await httpClient(api.url, creds.workspace).delete(`/v1/webhooks/${ids.webhook}`)).status).toBe(
        200,
      );
    });
  });
});

describe('Webhook endpoints without MANGO_WEBHOOK_SECRETS_KEY', () => {
  let api: ApiUnderTest;
  beforeAll(async () => {
    api = await startApi('webhooks-nokey');
  });
  afterAll(() => api.close());

  it('refuses to register (the secret could not be sealed) and says which variable is missing', async () => {
    const http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const res = await http.post('/v1/webhooks', { url: EXAMPLE, event_types: ['session.created'] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/MANGO_WEBHOOK_SECRETS_KEY/);
    expect(await api.sql('SELECT * FROM webhooks')).toEqual([]);
  });
});
