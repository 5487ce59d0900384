import { MangoClient } from './client';
import type { ResponseInfo } from './core';
import { ConflictError } from './errors';
import { agentFixture } from './testing/fixtures';
import { dropConnection, errorEnvelope, json, TestServer } from './testing/test-server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('Idempotency-Key (docs/api-guide.md, "Idempotent requests")', () => {
  let server: TestServer;
  let seen: ResponseInfo[];
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    seen = [];
    client = new MangoClient({
      baseUrl: server.baseUrl,
      apiKey: 'mango_ak_x',
      onResponse: (info) => seen.push(info),
    });
  });
  afterEach(() => server.close());

  const now = { 'retry-after-ms': '0' };

  it('a POST sends a fresh UUID key, and every retry of the call (dropped connection, 503) sends the same one', async () => {
    server.script(
      dropConnection(),
      errorEnvelope(503, 'api_error', 'unavailable', undefined, now),
      json(201, agentFixture()),
      json(201, agentFixture()),
    );
    await client.agents.create({ name: 'a', model: 'm' });
    await client.agents.create({ name: 'a', model: 'm' });
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(UUID);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    // The next logical call is another request: a new key.
    expect(keys[3]).toMatch(UUID);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it("sends the caller's key when given, and none on a GET", async () => {
    server.script(json(201, agentFixture()), json(200, agentFixture()));
    await client.agents.create({ name: 'a', model: 'm' }, { idempotencyKey: 'my-key-1' });
    await client.agents.retrieve('agent_1');
    expect(server.requests[0]!.headers['idempotency-key']).toBe('my-key-1');
    expect(server.requests[1]!.headers['idempotency-key']).toBeUndefined();
  });

  it('retries a 409 idempotency_in_progress after retry-after and reports the replay (its original request-id)', async () => {
    server.script(
      errorEnvelope(
        409,
        'invalid_request_error',
        'in progress',
        { error_code: 'idempotency_in_progress' },
        now,
      ),
      json(201, agentFixture(), { 'idempotent-replayed': 'true', 'request-id': 'req_first' }),
    );
    await expect(client.agents.create({ name: 'a', model: 'm' })).resolves.toEqual(agentFixture());
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers['idempotency-key']).toBe(
      server.requests[0]!.headers['idempotency-key'],
    );
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'POST',
        status: 201,
        requestId: 'req_first',
        replayed: true,
        idempotencyKey: server.requests[0]!.headers['idempotency-key'],
      }),
    ]);
  });

  it('does not retry any other 409 (a reused key, a state conflict)', async () => {
    server.script(
      errorEnvelope(409, 'invalid_request_error', 'reused', { error_code: 'idempotency_key_reused' }, now),
    );
    await expect(client.agents.create({ name: 'a', model: 'm' })).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
  });

  it('reports a response that ran as not replayed', async () => {
    server.script(json(201, agentFixture()));
    await client.agents.create({ name: 'a', model: 'm' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.replayed).toBe(false);
  });
});
