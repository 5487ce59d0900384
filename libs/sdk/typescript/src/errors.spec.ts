import { MangoClient } from './client';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  MangoError,
  NotFoundError,
  PermissionDeniedError,
  PreconditionFailedError,
  RateLimitError,
  RequestTooLargeError,
} from './errors';
import { errorEnvelope, raw, TestServer } from './testing/test-server';
import { NO_HEARTBEAT } from './types';

describe('error mapping', () => {
  let server: TestServer;
  let client: MangoClient;

  beforeEach(async () => {
    server = await TestServer.start();
    client = new MangoClient({ baseUrl: server.baseUrl, apiKey: 'mango_ak_x', maxRetries: 0 });
  });

  afterEach(async () => {
    await server.close();
  });

  it.each([
    [400, 'invalid_request_error', BadRequestError],
    [401, 'authentication_error', AuthenticationError],
    [403, 'permission_error', PermissionDeniedError],
    [404, 'not_found_error', NotFoundError],
    [409, 'invalid_request_error', ConflictError],
    [412, 'heartbeat_precondition_failed', PreconditionFailedError],
    [413, 'request_too_large', RequestTooLargeError],
    [429, 'rate_limit_error', RateLimitError],
    [500, 'api_error', InternalServerError],
    [503, 'api_error', InternalServerError],
  ])('%d %s → %p with status, type, message, details and requestId', async (status, type, ErrorClass) => {
    server.script(errorEnvelope(status, type, `boom ${status}`, { hint: 'h' }));
    const error = await client.agents.create({ name: 'a', model: 'm' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(MangoError);
    expect(error).toBeInstanceOf(Error);
    const e = error as MangoError;
    expect(e.status).toBe(status);
    expect(e.type).toBe(type);
    expect(e.message).toBe(`boom ${status}`);
    expect(e.details).toEqual({ hint: 'h' });
    expect(e.requestId).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(e.requestId).toBe(e.headers?.get('request-id'));
    expect(e.name).toBe(ErrorClass.name);
  });

  it('412 exposes details.current_state as currentState', async () => {
    const currentState = {
      state: 'active',
      ttl_seconds: 12,
      last_heartbeat: '2026-01-02T03:04:06.000Z',
      lease_extended: false,
    };
    server.script(
      errorEnvelope(412, 'heartbeat_precondition_failed', 'expected_last_heartbeat does not match', {
        error_code: 'heartbeat_precondition_failed',
        current_state: currentState,
      }),
    );
    const error = await client.environments.work
      .heartbeat('env_1', 'work_1', { expected_last_heartbeat: NO_HEARTBEAT })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect((error as PreconditionFailedError).currentState).toEqual(currentState);
  });

  it('412 without details leaves currentState undefined', async () => {
    server.script(errorEnvelope(412, 'heartbeat_precondition_failed', 'stale'));
    const error = (await client.environments.work
      .heartbeat('env_1', 'work_1', { expected_last_heartbeat: NO_HEARTBEAT })
      .catch((e: unknown) => e)) as PreconditionFailedError;
    expect(error.currentState).toBeUndefined();
    expect(error.details).toBeUndefined();
  });

  it('a non-envelope error body still maps by status and takes the request id from the header', async () => {
    server.script(
      raw(502, '<html>Bad Gateway</html>', { 'content-type': 'text/html', 'request-id': 'req_from_header' }),
    );
    const error = (await client.agents.retrieve('agent_1').catch((e: unknown) => e)) as MangoError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(502);
    expect(error.type).toBe('api_error');
    expect(error.requestId).toBe('req_from_header');
    expect(error.message).toBe('HTTP 502: <html>Bad Gateway</html>');
  });

  it('an empty 401 body falls back to the status-derived type', async () => {
    server.script(raw(401, ''));
    const error = (await client.agents.retrieve('agent_1').catch((e: unknown) => e)) as MangoError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.type).toBe('authentication_error');
    expect(error.message).toBe('HTTP 401');
  });

  it('an unmapped status is a plain MangoError', async () => {
    server.script(errorEnvelope(418, 'invalid_request_error', 'teapot'));
    const error = (await client.agents.retrieve('agent_1').catch((e: unknown) => e)) as MangoError;
    expect(error.constructor).toBe(MangoError);
    expect(error.status).toBe(418);
    expect(error.message).toBe('teapot');
  });
});
