import { MangoClient } from './client';
import { agentFixture, environmentFixture, polledWorkFixture, workFixture } from './testing/fixtures';
import { errorEnvelope, json, noContent, TestServer } from './testing/test-server';
import { NO_HEARTBEAT } from './types';
import { encodeWorkSecret } from './work-secret';

const API_KEY = 'mango_ak_test_workspace_key';
const ENV_ID = 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const WORK_ID = 'work_01JD2Y3QX9V5M8K7R6T4W2P0AB';

describe('MangoClient requests', () => {
  let server: TestServer;
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: API_KEY, maxRetries: 0 });
  });

  afterEach(async () => {
    await server.close();
  });

  describe('construction', () => {
    it('rejects a missing baseUrl or apiKey and bad retry/timeout settings', () => {
      expect(() => new MangoClient({ baseUrl: '', apiKey: API_KEY })).toThrow(/baseUrl is required/);
      expect(() => new MangoClient({ baseUrl: 'not a url', apiKey: API_KEY })).toThrow(/not a valid URL/);
      expect(() => new MangoClient({ baseUrl: 'ftp://x', apiKey: API_KEY })).toThrow(/http/);
      expect(() => new MangoClient({ baseUrl: server.baseUrl, apiKey: '' })).toThrow(/apiKey is required/);
      expect(() => new MangoClient({ baseUrl: server.baseUrl, apiKey: API_KEY, maxRetries: -1 })).toThrow(
        /maxRetries/,
      );
      expect(() => new MangoClient({ baseUrl: server.baseUrl, apiKey: API_KEY, timeoutMs: 0 })).toThrow(
        /timeoutMs/,
      );
    });

    it('tolerates a trailing slash and keeps a path prefix of baseUrl', async () => {
      server.script(json(200, agentFixture()), json(200, agentFixture()));
      await new MangoClient({ baseUrl: `${server.baseUrl}/`, apiKey: API_KEY }).agents.retrieve('agent_1');
      await new MangoClient({ baseUrl: `${server.baseUrl}/mango/`, apiKey: API_KEY }).agents.retrieve(
        'agent_1',
      );
      expect(server.requests.map((r) => r.path)).toEqual(['/v1/agents/agent_1', '/mango/v1/agents/agent_1']);
    });

    it('uses a custom fetch implementation when given', async () => {
      server.script(json(200, agentFixture()));
      const seen: string[] = [];
      const custom = new MangoClient({
        baseUrl: server.baseUrl,
        apiKey: API_KEY,
        fetch: (input, init) => {
          seen.push(String(input));
          return fetch(input, init);
        },
      });
      await custom.agents.retrieve('agent_1');
      expect(seen).toEqual([`${server.baseUrl}/v1/agents/agent_1`]);
    });
  });

  describe('headers', () => {
    it('sends the credential as a bearer token, accepts JSON and sends no content-type without a body', async () => {
      server.script(json(200, agentFixture()));
      await client.agents.retrieve('agent_1');
      const { headers, body } = server.lastRequest;
      expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(headers['x-api-key']).toBeUndefined();
      expect(headers.accept).toBe('application/json');
      expect(headers['user-agent']).toMatch(/^mango-sdk-typescript\//);
      expect(headers['content-type']).toBeUndefined();
      expect(body).toBe('');
    });

    it('merges default and per-request headers but never lets them replace the credential', async () => {
      server.script(json(200, agentFixture()));
      const custom = new MangoClient({
        baseUrl: server.baseUrl,
        apiKey: API_KEY,
        defaultHeaders: { 'X-Default': 'd', Authorization: 'Bearer nope' },
      });
      await custom.agents.retrieve(
        'agent_1',
        {},
        { headers: { 'x-call': 'c', authorization: 'Bearer nope' } },
      );
      const { headers } = server.lastRequest;
      expect(headers['x-default']).toBe('d');
      expect(headers['x-call']).toBe('c');
      expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    });

    it('withToken returns a client bound to another credential and leaves the original unchanged', async () => {
      server.script(json(200, agentFixture()), json(200, agentFixture()));
      const worker = client.withToken('mango_wt_work_token');
      await worker.agents.retrieve('agent_1');
      await client.agents.retrieve('agent_1');
      expect(server.requests.map((r) => r.headers.authorization)).toEqual([
        'Bearer mango_wt_work_token',
        `Bearer ${API_KEY}`,
      ]);
      expect(worker).not.toBe(client);
      expect(worker.baseUrl).toBe(client.baseUrl);
    });

    it('withToken can also point the new client at another base URL', async () => {
      const other = await TestServer.start();
      try {
        other.script(json(200, agentFixture()));
        await client.withToken('mango_wt_x', { baseUrl: other.baseUrl }).agents.retrieve('agent_1');
        expect(other.lastRequest.headers.authorization).toBe('Bearer mango_wt_x');
        expect(server.requests).toHaveLength(0);
      } finally {
        await other.close();
      }
    });
  });

  describe('agents', () => {
    it('create POSTs the JSON body to /v1/agents and returns the 201 object', async () => {
      const agent = agentFixture();
      server.script(json(201, agent));
      const params = {
        name: 'triage',
        model: { id: 'claude-sonnet-4-5', effort: 'high' as const },
        tools: [
          { type: 'agent_toolset_20260401' as const, configs: [{ name: 'bash' as const, enabled: false }] },
        ],
        metadata: { team: 'core' },
      };
      await expect(client.agents.create(params)).resolves.toEqual(agent);
      const req = server.lastRequest;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/v1/agents');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.json).toEqual(params);
    });

    it('retrieve sends version as a query parameter only when given', async () => {
      server.script(json(200, agentFixture()), json(200, agentFixture(undefined, { version: 3 })));
      await client.agents.retrieve('agent_01JD2Y3QX9V5M8K7R6T4W2P0AB');
      const v3 = await client.agents.retrieve('agent_01JD2Y3QX9V5M8K7R6T4W2P0AB', { version: 3 });
      expect(v3.version).toBe(3);
      expect(server.requests.map((r) => r.url)).toEqual([
        '/v1/agents/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
        '/v1/agents/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB?version=3',
      ]);
    });

    it('update POSTs the patch, preserving explicit nulls', async () => {
      server.script(json(200, agentFixture(undefined, { version: 2 })));
      const patch = { version: 1, description: null, tools: null, metadata: { team: null, owner: 'me' } };
      const updated = await client.agents.update('agent_1', patch);
      expect(updated.version).toBe(2);
      expect(server.lastRequest.method).toBe('POST');
      expect(server.lastRequest.path).toBe('/v1/agents/agent_1');
      expect(server.lastRequest.body).toBe(JSON.stringify(patch));
    });

    it('archive POSTs without a body', async () => {
      server.script(json(200, agentFixture(undefined, { archived_at: '2026-01-03T00:00:00.000Z' })));
      const archived = await client.agents.archive('agent_1');
      expect(archived.archived_at).toBe('2026-01-03T00:00:00.000Z');
      expect(server.lastRequest).toMatchObject({
        method: 'POST',
        path: '/v1/agents/agent_1/archive',
        body: '',
      });
      expect(server.lastRequest.headers['content-type']).toBeUndefined();
    });

    it('list encodes created_at as bracketed keys, dates as ISO strings and booleans as true/false', async () => {
      server.script(json(200, { data: [agentFixture()], next_page: null }));
      const page = await client.agents.list({
        limit: 50,
        include_archived: true,
        created_at: { gte: new Date('2026-01-01T00:00:00.000Z'), lte: '2026-02-01T00:00:00.000Z' },
      });
      expect(page.data).toHaveLength(1);
      const req = server.lastRequest;
      expect(req.path).toBe('/v1/agents');
      expect(req.url).toContain('created_at[gte]=');
      expect(req.url).toContain('created_at[lte]=');
      expect(Object.fromEntries(req.query)).toEqual({
        limit: '50',
        include_archived: 'true',
        'created_at[gte]': '2026-01-01T00:00:00.000Z',
        'created_at[lte]': '2026-02-01T00:00:00.000Z',
      });
    });

    it('list omits undefined parameters entirely', async () => {
      server.script(json(200, { data: [], next_page: null }));
      await client.agents.list({ limit: undefined, include_archived: false });
      expect(server.lastRequest.url).toBe('/v1/agents?include_archived=false');
    });

    it('versions.list GETs /v1/agents/{id}/versions with limit and page', async () => {
      server.script(json(200, { data: [agentFixture(undefined, { version: 2 })], next_page: null }));
      const page = await client.agents.versions.list('agent_1', { limit: 1, page: 'cursor_A' });
      expect(page.data[0]!.version).toBe(2);
      expect(server.lastRequest.url).toBe('/v1/agents/agent_1/versions?limit=1&page=cursor_A');
    });

    it('percent-encodes path ids', async () => {
      server.script(json(200, agentFixture()));
      await client.agents.retrieve('a/b?c');
      expect(server.lastRequest.url).toBe('/v1/agents/a%2Fb%3Fc');
    });
  });

  describe('environments', () => {
    it('create POSTs and returns the 201 Environment', async () => {
      server.script(json(201, environmentFixture()));
      const env = await client.environments.create({ name: 'local', scope: 'account', metadata: { a: 'b' } });
      expect(env.type).toBe('environment');
      expect(server.lastRequest).toMatchObject({
        method: 'POST',
        path: '/v1/environments',
        json: { name: 'local', scope: 'account', metadata: { a: 'b' } },
      });
    });

    it('retrieve, update, archive and list hit their routes', async () => {
      server.script(
        json(200, environmentFixture()),
        json(200, environmentFixture(undefined, { description: 'x' })),
        json(200, environmentFixture(undefined, { archived_at: '2026-01-03T00:00:00.000Z' })),
        json(200, { data: [environmentFixture()], next_page: null }),
      );
      await client.environments.retrieve(ENV_ID);
      await client.environments.update(ENV_ID, { description: 'x', metadata: { old: '' } });
      await client.environments.archive(ENV_ID);
      await client.environments.list({ include_archived: true, limit: 5 });
      expect(server.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
        `GET /v1/environments/${ENV_ID} `,
        `POST /v1/environments/${ENV_ID} {"description":"x","metadata":{"old":""}}`,
        `POST /v1/environments/${ENV_ID}/archive `,
        'GET /v1/environments?include_archived=true&limit=5 ',
      ]);
    });

    it('delete sends DELETE and returns the tombstone', async () => {
      server.script(json(200, { id: ENV_ID, type: 'environment_deleted' }));
      await expect(client.environments.delete(ENV_ID)).resolves.toEqual({
        id: ENV_ID,
        type: 'environment_deleted',
      });
      expect(server.lastRequest).toMatchObject({ method: 'DELETE', path: `/v1/environments/${ENV_ID}` });
    });
  });

  describe('environments.work', () => {
    const base = `/v1/environments/${ENV_ID}/work`;

    it('create defaults the body to a healthcheck and returns the 201 Work', async () => {
      server.script(json(201, workFixture()));
      const work = await client.environments.work.create(ENV_ID);
      expect(work.data).toEqual({ type: 'healthcheck' });
      expect(server.lastRequest).toMatchObject({
        method: 'POST',
        path: base,
        json: { data: { type: 'healthcheck' } },
      });
    });

    it('retrieve, update, list and stats hit their routes', async () => {
      server.script(
        json(200, workFixture()),
        json(200, workFixture(undefined, { metadata: { k: 'v' } })),
        json(200, { data: [workFixture()], next_page: null }),
        json(200, {
          type: 'work_queue_stats',
          depth: 2,
          pending: 1,
          oldest_queued_at: null,
          workers_polling: 3,
        }),
      );
      await client.environments.work.retrieve(ENV_ID, WORK_ID);
      const updated = await client.environments.work.update(ENV_ID, WORK_ID, {
        metadata: { k: 'v', gone: null },
      });
      await client.environments.work.list(ENV_ID, { limit: 10 });
      const stats = await client.environments.work.stats(ENV_ID);
      expect(updated.metadata).toEqual({ k: 'v' });
      expect(stats).toEqual({
        type: 'work_queue_stats',
        depth: 2,
        pending: 1,
        oldest_queued_at: null,
        workers_polling: 3,
      });
      expect(server.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
        `GET ${base}/${WORK_ID} `,
        `POST ${base}/${WORK_ID} {"metadata":{"k":"v","gone":null}}`,
        `GET ${base}?limit=10 `,
        `GET ${base}/stats `,
      ]);
    });

    it('poll sends block_ms, reclaim_older_than_ms and worker_id and returns the polled Work', async () => {
      const secret = encodeWorkSecret({ sessions_token: 'mango_wt_abc', api_base_url: server.baseUrl });
      server.script(json(200, polledWorkFixture(secret)));
      const polled = await client.environments.work.poll(ENV_ID, {
        block_ms: 0,
        reclaim_older_than_ms: 5000,
        worker_id: 'worker 1',
      });
      expect(polled?.secret).toBe(secret);
      expect(server.lastRequest.path).toBe(`${base}/poll`);
      expect(Object.fromEntries(server.lastRequest.query)).toEqual({
        block_ms: '0',
        reclaim_older_than_ms: '5000',
        worker_id: 'worker 1',
      });
    });

    it('poll resolves to null when the server answers {}', async () => {
      server.script(json(200, {}));
      await expect(client.environments.work.poll(ENV_ID)).resolves.toBeNull();
      expect(server.lastRequest.url).toBe(`${base}/poll`);
    });

    it('poll stretches the timeout to cover block_ms', async () => {
      const short = new MangoClient({
        baseUrl: server.baseUrl,
        apiKey: API_KEY,
        timeoutMs: 100,
        maxRetries: 0,
      });
      server.script((_req, res) => {
        setTimeout(() => json(200, {})(_req, res), 400);
      });
      await expect(short.environments.work.poll(ENV_ID, { block_ms: 500 })).resolves.toBeNull();
    });

    it('ack POSTs without a body', async () => {
      server.script(json(200, workFixture(undefined, { state: 'starting' })));
      const work = await client.environments.work.ack(ENV_ID, WORK_ID);
      expect(work.state).toBe('starting');
      expect(server.lastRequest).toMatchObject({ method: 'POST', path: `${base}/${WORK_ID}/ack`, body: '' });
    });

    it('heartbeat sends its parameters in the query string, not the body', async () => {
      const beat = {
        type: 'work_heartbeat',
        last_heartbeat: '2026-01-02T03:04:06.000Z',
        lease_extended: true,
        state: 'active',
        ttl_seconds: 30,
      };
      server.script(json(200, beat), json(200, beat));
      const first = await client.environments.work.heartbeat(ENV_ID, WORK_ID, {
        expected_last_heartbeat: NO_HEARTBEAT,
        desired_ttl_seconds: 30,
      });
      await client.environments.work.heartbeat(ENV_ID, WORK_ID, {
        expected_last_heartbeat: first.last_heartbeat,
      });
      expect(first).toEqual(beat);
      const [r1, r2] = server.requests;
      expect(r1).toMatchObject({ method: 'POST', path: `${base}/${WORK_ID}/heartbeat`, body: '' });
      expect(Object.fromEntries(r1!.query)).toEqual({
        expected_last_heartbeat: 'NO_HEARTBEAT',
        desired_ttl_seconds: '30',
      });
      expect(r2!.query.get('expected_last_heartbeat')).toBe('2026-01-02T03:04:06.000Z');
    });

    it('result and fail POST their JSON bodies', async () => {
      server.script(
        json(
          200,
          workFixture(undefined, { state: 'stopped', result: { status: 'succeeded', message: 'ok' } }),
        ),
        json(200, workFixture(undefined, { state: 'stopped', data: { type: 'session', id: 'sesn_1' } })),
      );
      const done = await client.environments.work.result(ENV_ID, WORK_ID, {
        status: 'succeeded',
        message: 'ok',
      });
      await client.environments.work.fail(ENV_ID, WORK_ID, { message: 'bad input' });
      expect(done.result).toEqual({ status: 'succeeded', message: 'ok' });
      expect(server.requests.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual([
        `POST ${base}/${WORK_ID}/result {"status":"succeeded","message":"ok"}`,
        `POST ${base}/${WORK_ID}/fail {"message":"bad input"}`,
      ]);
    });

    it('stop resolves to undefined on 204, with no body by default and {force} when given', async () => {
      server.script(noContent(), noContent());
      await expect(client.environments.work.stop(ENV_ID, WORK_ID)).resolves.toBeUndefined();
      await expect(client.environments.work.stop(ENV_ID, WORK_ID, { force: true })).resolves.toBeUndefined();
      const [graceful, forced] = server.requests;
      expect(graceful).toMatchObject({ method: 'POST', path: `${base}/${WORK_ID}/stop`, body: '' });
      expect(graceful!.headers['content-type']).toBeUndefined();
      expect(forced).toMatchObject({ body: '{"force":true}' });
      expect(forced!.headers['content-type']).toBe('application/json');
    });
  });

  describe('health', () => {
    it('liveness returns the status body', async () => {
      server.script(json(200, { status: 'ok' }));
      await expect(client.health.liveness()).resolves.toEqual({ status: 'ok' });
      expect(server.lastRequest.path).toBe('/healthz');
    });

    it('readiness returns the 503 body instead of throwing', async () => {
      const unavailable = { status: 'unavailable', checks: { database: 'unreachable' } };
      server.script(json(503, unavailable));
      const retrying = new MangoClient({ baseUrl: server.baseUrl, apiKey: API_KEY, maxRetries: 2 });
      await expect(retrying.health.readiness()).resolves.toEqual(unavailable);
      expect(server.requests).toHaveLength(1);
    });
  });

  it('a successful response with a malformed JSON body is a MangoError, not a crash', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_bad_json' });
      res.end('{"oops"');
    });
    await expect(client.agents.retrieve('agent_1')).rejects.toMatchObject({
      status: 200,
      requestId: 'req_bad_json',
      message: expect.stringContaining('Invalid JSON'),
    });
  });

  it('an error response carries the request id of the server', async () => {
    server.script(errorEnvelope(404, 'not_found_error', 'agent agent_1 not found'));
    const error = await client.agents.retrieve('agent_1').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, requestId: expect.stringMatching(/^req_/) });
  });
});
