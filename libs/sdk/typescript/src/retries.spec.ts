import { MangoClient } from './client';
import {
  BadRequestError,
  ConflictError,
  ConnectionError,
  ConnectionTimeoutError,
  InternalServerError,
  RateLimitError,
  RequestAbortedError,
} from './errors';
import { agentFixture } from './testing/fixtures';
import { dropConnection, errorEnvelope, hang, json, TestServer } from './testing/test-server';

describe('retries and timeouts', () => {
  let server: TestServer;

  beforeEach(async () => {
    server = await TestServer.start();
  });

  afterEach(async () => {
    await server.close();
  });

  const clientWith = (opts: { maxRetries?: number; timeoutMs?: number } = {}): MangoClient =>
    new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', ...opts });

  it('retries a 503 with backoff and then succeeds', async () => {
    server.script(errorEnvelope(503, 'api_error', 'unavailable'), json(200, agentFixture()));
    const started = Date.now();
    await expect(clientWith().agents.retrieve('agent_1')).resolves.toEqual(agentFixture());
    expect(server.requests).toHaveLength(2);
    // First retry waits 500 ms minus up to 25 % jitter.
    expect(Date.now() - started).toBeGreaterThanOrEqual(370);
    expect(server.requests[1]!.url).toBe(server.requests[0]!.url);
    expect(server.requests[1]!.headers.authorization).toBe('Bearer mango_ak_x');
  });

  it('re-sends the same JSON body on a retried POST', async () => {
    server.script(
      errorEnvelope(500, 'api_error', 'oops', undefined, { 'retry-after-ms': '0' }),
      json(201, agentFixture()),
    );
    await clientWith().agents.create({ name: 'a', model: 'm' });
    expect(server.requests.map((r) => r.body)).toEqual([
      '{"name":"a","model":"m"}',
      '{"name":"a","model":"m"}',
    ]);
  });

  it('honours retry-after on 429', async () => {
    server.script(
      errorEnvelope(429, 'rate_limit_error', 'slow down', undefined, { 'retry-after': '0' }),
      errorEnvelope(408, 'invalid_request_error', 'timeout', undefined, { 'retry-after-ms': '10' }),
      json(200, agentFixture()),
    );
    const started = Date.now();
    await clientWith().agents.retrieve('agent_1');
    expect(server.requests).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    server.always(errorEnvelope(500, 'api_error', 'still broken', undefined, { 'retry-after-ms': '1' }));
    const error = await clientWith({ maxRetries: 2 })
      .agents.retrieve('agent_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry when maxRetries is 0 (per client or per request)', async () => {
    server.always(errorEnvelope(429, 'rate_limit_error', 'no', undefined, { 'retry-after-ms': '1' }));
    await expect(clientWith({ maxRetries: 0 }).agents.retrieve('agent_1')).rejects.toBeInstanceOf(
      RateLimitError,
    );
    await expect(clientWith().agents.retrieve('agent_1', {}, { maxRetries: 0 })).rejects.toBeInstanceOf(
      RateLimitError,
    );
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    [400, 'invalid_request_error', BadRequestError],
    [409, 'invalid_request_error', ConflictError],
  ])('never retries a %d', async (status, type, ErrorClass) => {
    server.script(errorEnvelope(status, type, 'no'), json(200, agentFixture()));
    await expect(clientWith({ maxRetries: 3 }).agents.retrieve('agent_1')).rejects.toBeInstanceOf(ErrorClass);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a dropped connection and then succeeds', async () => {
    server.script(dropConnection(), json(200, agentFixture()));
    await expect(clientWith({ maxRetries: 1 }).agents.retrieve('agent_1')).resolves.toEqual(agentFixture());
    expect(server.requests).toHaveLength(2);
  });

  it('a refused connection is a ConnectionError', async () => {
    const { baseUrl } = server;
    await server.close();
    const client = new MangoClient({ baseUrl, apiKey: 'mango_ak_x', maxRetries: 0 });
    const error = await client.agents.retrieve('agent_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).not.toBeInstanceOf(ConnectionTimeoutError);
    expect((error as ConnectionError).status).toBeUndefined();
    expect((error as ConnectionError).type).toBe('connection_error');
    expect((error as ConnectionError).message).toContain('Connection error: GET');
    server = await TestServer.start(); // for afterEach
  });

  it('a request that exceeds timeoutMs is a ConnectionError (ConnectionTimeoutError)', async () => {
    server.always(hang());
    const started = Date.now();
    const error = await clientWith({ timeoutMs: 150, maxRetries: 0 })
      .agents.retrieve('agent_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toBeInstanceOf(ConnectionTimeoutError);
    expect((error as Error).message).toMatch(/timed out after 150 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a per-request timeoutMs overrides the client default, and timeouts are retried', async () => {
    server.script(hang(), json(200, agentFixture()));
    await expect(
      clientWith({ timeoutMs: 60_000, maxRetries: 1 }).agents.retrieve('agent_1', {}, { timeoutMs: 100 }),
    ).resolves.toEqual(agentFixture());
    expect(server.requests).toHaveLength(2);
  });

  it('a caller abort rejects with RequestAbortedError and is not retried', async () => {
    server.always(hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await clientWith({ maxRetries: 3 })
      .agents.retrieve('agent_1', {}, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during the backoff sleep stops the retries', async () => {
    server.always(errorEnvelope(503, 'api_error', 'down'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(
      clientWith({ maxRetries: 5 }).agents.retrieve('agent_1', {}, { signal: controller.signal }),
    ).rejects.toBeInstanceOf(RequestAbortedError);
    expect(server.requests).toHaveLength(1);
  });
});
