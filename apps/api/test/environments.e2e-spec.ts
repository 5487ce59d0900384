import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

describe('Environments over HTTP (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  beforeAll(async () => {
    api = await startApi('envs');
    http = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  });
  afterAll(() => api.close());

  it('creates self_hosted Environments (201), enforces unique names, patches metadata, archives and deletes', async () => {
    const created = await http.post('/v1/environments', {
      name: 'pool-a',
      description: 'docker hosts',
      metadata: { region: 'eu', owner: 'ops' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'environment',
      name: 'pool-a',
      config: { type: 'self_hosted' },
      scope: 'organization',
    });
    const id = created.body.id;

    const dup = await http.post('/v1/environments', { name: 'pool-a' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.message).toMatch(/already exists/);

    const updated = await http.post(`/v1/environments/${id}`, {
      description: null,
      metadata: { region: '', owner: null, tier: '1' },
    });
    expect(updated.body).toMatchObject({ description: null, metadata: { tier: '1' } });
    const cloud = await http.post(`/v1/environments/${id}`, { config: { type: 'cloud' } });
    expect(cloud.status).toBe(400);
    expect(cloud.body.error.message).toMatch(/self_hosted/);

    const other = (await http.post('/v1/environments', { name: 'pool-b' })).body;
    const rename = await http.post(`/v1/environments/${other.id}`, { name: 'pool-a' });
    expect(rename.status).toBe(409);

    const page1 = await http.get('/v1/environments?limit=1');
    expect(page1.body.data[0].id).toBe(other.id);
    const page2 = await http.get(`/v1/environments?limit=1&page=${page1.body.next_page}`);
    expect(page2.body.data[0].id).toBe(id);

    await http.post(`/v1/environments/${id}/archive`);
    expect((await http.get('/v1/environments')).body.data.map((e: { id: string }) => e.id)).toEqual([
      other.id,
    ]);
    expect((await http.get('/v1/environments?include_archived=true')).body.data).toHaveLength(2);
    expect((await http.post(`/v1/environments/${id}`, { name: 'z' })).status).toBe(409);

    const envKey = await api.issueKey('wrkspc_default', other.id);
    const tomb = await http.delete(`/v1/environments/${other.id}`);
    expect(tomb.body).toEqual({ id: other.id, type: 'environment_deleted' });
    expect((await http.get(`/v1/environments/${other.id}`)).status).toBe(404);
    expect((await http.delete(`/v1/environments/${other.id}`)).status).toBe(404);
    // The deleted Environment's supervisor key stops authenticating, and its name is free again.
    const afterDelete = await httpClient(api.url, envKey.api_key).get(`/v1/environments/${id}`);
    expect(afterDelete.status).toBe(401);
    expect((await http.post('/v1/environments', { name: 'pool-b' })).status).toBe(201);
  });

  it('stores config.networking in the hosted shape, replaces it on update, clears it with null; an Environment key reads only its own Environment', async () => {
    const created = await http.post('/v1/environments', {
      name: 'egress',
      config: {
        type: 'self_hosted',
        networking: { type: 'limited', allowed_hosts: ['GitHub.com', '*.pypi.org:443', '93.184.216.34'] },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.config).toEqual({
      type: 'self_hosted',
      networking: {
        type: 'limited',
        allowed_hosts: ['github.com', '*.pypi.org:443', '93.184.216.34'],
        allow_package_managers: false,
        allow_mcp_servers: false,
      },
    });
    const id = created.body.id;
    const bad = await http.post(`/v1/environments/${id}`, {
      config: { type: 'self_hosted', networking: { type: 'limited', allowed_hosts: ['10.0.0.0/8'] } },
    });
    expect(bad.status).toBe(400);
    expect((await http.get(`/v1/environments/${id}`)).body.config).toEqual(created.body.config);

    const open = await http.post(`/v1/environments/${id}`, {
      config: { type: 'self_hosted', networking: { type: 'unrestricted' } },
    });
    expect(open.body.config).toEqual({ type: 'self_hosted', networking: { type: 'unrestricted' } });

    const envKey = httpClient(api.url, (await api.issueKey('wrkspc_default', id)).api_key);
    const own = await envKey.get(`/v1/environments/${id}`);
    expect(own.status).toBe(200);
    expect(own.body.config.networking).toEqual({ type: 'unrestricted' });
    const other = (await http.post('/v1/environments', { name: 'egress-other' })).body;
    const foreign = await envKey.get(`/v1/environments/${other.id}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.type).toBe('permission_error');
    expect((await envKey.get('/v1/environments')).status).toBe(403);
    expect((await envKey.post(`/v1/environments/${id}`, { name: 'x' })).status).toBe(403);

    const sealed = await http.post(`/v1/environments/${id}`, {
      config: { type: 'self_hosted', networking: null },
    });
    expect(sealed.body.config).toEqual({ type: 'self_hosted' });
  });

  it.each<[string, unknown, RegExp]>([
    ['a missing name', {}, /name is required/],
    ['a cloud config', { name: 'c', config: { type: 'cloud' } }, /self_hosted/],
    ['an unknown scope', { name: 'c', scope: 'galaxy' }, /scope must be one of/],
    ['an unknown field', { name: 'c', networking: {} }, /unknown field/],
    [
      'an unknown config field',
      { name: 'c', config: { type: 'self_hosted', egress: true } },
      /config\.egress: unknown field/,
    ],
    [
      'an unknown networking type',
      { name: 'c', config: { type: 'self_hosted', networking: { type: 'open' } } },
      /config\.networking\.type must be one of: unrestricted, limited/,
    ],
    [
      'a URL in allowed_hosts',
      {
        name: 'c',
        config: {
          type: 'self_hosted',
          networking: { type: 'limited', allowed_hosts: ['https://github.com'] },
        },
      },
      /allowed_hosts\[0\] "https:\/\/github\.com" is not a host name/,
    ],
    [
      'a wildcard over a top-level domain',
      {
        name: 'c',
        config: { type: 'self_hosted', networking: { type: 'limited', allowed_hosts: ['*.com'] } },
      },
      /allowed_hosts\[0\]/,
    ],
    [
      'a non-boolean flag',
      {
        name: 'c',
        config: { type: 'self_hosted', networking: { type: 'limited', allow_package_managers: 1 } },
      },
      /allow_package_managers must be a boolean/,
    ],
    [
      'fields on unrestricted',
      { name: 'c', config: { type: 'self_hosted', networking: { type: 'unrestricted', allowed_hosts: [] } } },
      /allowed_hosts: unknown field/,
    ],
    [
      '17 metadata keys',
      { name: 'c', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
      /at most 16/,
    ],
  ])('rejects %s and writes nothing', async (_label, body, message) => {
    const before = await api.sql<{ n: string }>('SELECT count(*) AS n FROM environments');
    const res = await http.post('/v1/environments', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(res.body.error.message).toMatch(message);
    expect((await api.sql<{ n: string }>('SELECT count(*) AS n FROM environments'))[0]!.n).toBe(before[0]!.n);
  });
});
