import { httpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Credential × endpoint matrix for the control-plane routes of this milestone. Every cell asserts the
 * exact status and error type. (Work routes add Environment-key and Work-token rows in their own suite.)
 */
describe('credential matrix (real apps/api process)', () => {
  let api: ApiUnderTest;
  const creds: Record<string, string | undefined> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await startApi('creds');
    const ws = await api.issueKey('wrkspc_default');
    creds.workspace = ws.api_key;
    const http = httpClient(api.url, ws.api_key);
    ids.agent = (await http.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    ids.env = (await http.post('/v1/environments', { name: 'e' })).body.id;
    creds.environment = (await api.issueKey('wrkspc_default', ids.env)).api_key;
    const revoked = await api.issueKey('wrkspc_default');
    await api.revokeKey(revoked.id);
    creds.revoked = revoked.api_key;
    const otherWs = await api.createWorkspace();
    creds.otherWorkspace = (await api.issueKey(otherWs)).api_key;
    creds.missing = undefined;
    creds.garbage = 'mango_ak_not-a-real-key';
    creds.forgedShape = `mango_ak_${'A'.repeat(43)}`;
  });
  afterAll(() => api.close());

  // Every row has four cells: Jest treats a callback with more parameters than cells as a done-callback.
  let n = 0;
  const routes: Array<[string, string, (i: Record<string, string>) => string, () => unknown]> = [
    ['POST', 'agents.create', () => '/v1/agents', () => ({ name: 'n', model: 'm' })],
    ['GET', 'agents.list', () => '/v1/agents', () => undefined],
    ['GET', 'agents.retrieve', (i) => `/v1/agents/${i.agent}`, () => undefined],
    ['POST', 'agents.update', (i) => `/v1/agents/${i.agent}`, () => ({ description: `d${n++}` })],
    ['GET', 'agents.versions.list', (i) => `/v1/agents/${i.agent}/versions`, () => undefined],
    ['POST', 'environments.create', () => '/v1/environments', () => ({ name: `e-${n++}` })],
    ['GET', 'environments.list', () => '/v1/environments', () => undefined],
    ['GET', 'environments.retrieve', (i) => `/v1/environments/${i.env}`, () => undefined],
    ['POST', 'environments.update', (i) => `/v1/environments/${i.env}`, () => ({ description: `d${n++}` })],
  ];

  const expected: Record<string, [number, string | null]> = {
    workspace: [0, null],
    environment: [403, 'permission_error'],
    revoked: [401, 'authentication_error'],
    garbage: [401, 'authentication_error'],
    forgedShape: [401, 'authentication_error'],
    missing: [401, 'authentication_error'],
  };

  for (const [cred, [status, type]] of Object.entries(expected)) {
    it.each(routes)(`${cred} key: %s %s`, async (method, _op, path, body) => {
      const res = await httpClient(api.url, creds[cred]).request(method, path(ids), body());
      // An Environment key reads its own Environment (its supervisor's egress policy, ADR 0021).
      if (cred === 'environment' && _op === 'environments.retrieve') {
        expect(res.status).toBe(200);
        return;
      }
      if (status === 0) {
        expect([200, 201]).toContain(res.status);
      } else {
        expect(res.status).toBe(status);
        expect(res.body.error.type).toBe(type);
      }
    });
  }

  it.each(
    routes.filter(
      ([, op]) => op.endsWith('retrieve') || op.endsWith('update') || op.endsWith('versions.list'),
    ),
  )(
    "another workspace's key gets 404 for this workspace's resources: %s %s",
    async (method, _op, path, body) => {
      const res = await httpClient(api.url, creds.otherWorkspace).request(method, path(ids), body());
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('not_found_error');
    },
  );

  it("another workspace's lists do not show this workspace's resources", async () => {
    const other = httpClient(api.url, creds.otherWorkspace);
    expect((await other.get('/v1/agents')).body.data).toEqual([]);
    expect((await other.get('/v1/environments')).body.data).toEqual([]);
  });

  it('x-api-key means the same as Authorization: Bearer; two different credentials are refused', async () => {
    expect(
      (await httpClient(api.url, creds.workspace, { header: 'x-api-key' }).get('/v1/agents')).status,
    ).toBe(200);
    const both = await httpClient(api.url, creds.workspace).get('/v1/agents', {
      headers: { 'x-api-key': creds.environment! },
    });
    expect(both.status).toBe(401);
    const same = await httpClient(api.url, creds.workspace).get('/v1/agents', {
      headers: { 'x-api-key': creds.workspace! },
    });
    expect(same.status).toBe(200);
  });

  it('ignores anthropic-version, anthropic-beta and ?beta=true', async () => {
    const res = await httpClient(api.url, creds.workspace).get('/v1/agents?beta=true', {
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'managed-agents-2026-04-01' },
    });
    expect(res.status).toBe(200);
  });

  it('never returns or logs a credential', async () => {
    const logs = api.app.logs();
    for (const c of [creds.workspace, creds.environment, creds.revoked]) expect(logs).not.toContain(c);
  });
});
