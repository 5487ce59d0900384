import { DomainError, ErrorCode, rateLimited } from '@mango/domain-kernel';
import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import pino from 'pino';
import type { Request } from 'express';
import { renderError } from './api-exception.filter';
import { errorTypeOf, httpStatusOf } from './error-mapping';

const req = { requestId: 'req_TEST', method: 'GET', path: '/x' } as unknown as Request;
const silent = pino({ level: 'silent' });

describe('error mapping', () => {
  it.each<[ErrorCode, number, string]>([
    [ErrorCode.InvalidRequest, 400, 'invalid_request_error'],
    [ErrorCode.Authentication, 401, 'authentication_error'],
    [ErrorCode.Permission, 403, 'permission_error'],
    [ErrorCode.NotFound, 404, 'not_found_error'],
    [ErrorCode.Conflict, 409, 'invalid_request_error'],
    [ErrorCode.PreconditionFailed, 412, 'heartbeat_precondition_failed'],
    [ErrorCode.TooLarge, 413, 'request_too_large'],
    [ErrorCode.RateLimited, 429, 'rate_limit_error'],
    [ErrorCode.Internal, 500, 'api_error'],
  ])('%s → %i %s', (code, status, type) => {
    expect(httpStatusOf(code)).toBe(status);
    expect(errorTypeOf(code)).toBe(type);
  });

  it('covers every code', () => {
    for (const code of Object.values(ErrorCode)) expect(httpStatusOf(code)).toBeGreaterThanOrEqual(400);
  });
});

describe('renderError', () => {
  it('a rate-limit refusal is 429 rate_limit_error with retry-after in whole seconds (at least 1)', () => {
    const out = renderError(rateLimited('slow down', 2.2, { limit: 'requests' }), req, silent);
    expect(out).toEqual({
      status: 429,
      headers: { 'retry-after': '3' },
      body: {
        type: 'error',
        error: { type: 'rate_limit_error', message: 'slow down', details: { limit: 'requests' } },
        request_id: 'req_TEST',
      },
    });
    expect(renderError(rateLimited('x', 0.01), req, silent).headers).toEqual({ 'retry-after': '1' });
  });

  it('renders a DomainError with details and an explicit type override', () => {
    const err = new DomainError(
      ErrorCode.Conflict,
      'stale',
      { current_state: { state: 'active' } },
      'memory_precondition_failed_error',
    );
    expect(renderError(err, req, silent)).toEqual({
      status: 409,
      body: {
        type: 'error',
        error: {
          type: 'memory_precondition_failed_error',
          message: 'stale',
          details: { current_state: { state: 'active' } },
        },
        request_id: 'req_TEST',
      },
    });
  });

  it('maps framework errors: malformed JSON, unknown route, oversize body', () => {
    expect(
      renderError(new BadRequestException('Unexpected token } in JSON at position 1'), req, silent).body.error
        .message,
    ).toBe('request body is not valid JSON');
    expect(renderError(new NotFoundException('Cannot GET /x'), req, silent)).toMatchObject({
      status: 404,
      body: { error: { type: 'not_found_error', message: 'no such route' } },
    });
    expect(renderError(new PayloadTooLargeException(), req, silent)).toMatchObject({
      status: 413,
      body: { error: { type: 'request_too_large' } },
    });
  });

  it('never leaks internals: an unknown error becomes a generic 500 api_error', () => {
    const out = renderError(
      new Error('relation "secret_table" does not exist at /srv/app.js:12'),
      req,
      silent,
    );
    expect(out).toEqual({
      status: 500,
      body: {
        type: 'error',
        error: { type: 'api_error', message: 'internal error' },
        request_id: 'req_TEST',
      },
    });
  });
});

describe('a dependency that cannot be reached', () => {
  const pgError = (code: string) => Object.assign(new Error('terminating connection'), { code });
  it.each<[string, unknown]>([
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['a backend shut down by the server (57P01)', pgError('57P01')],
    ['the server starting up (57P03)', pgError('57P03')],
    ['a connection exception (08006)', pgError('08006')],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
    ['an exhausted pool', new Error('timeout exceeded when trying to connect')],
    [
      'TypeORM wrapping the driver',
      Object.assign(new Error('query failed'), { driverError: pgError('57P01') }),
    ],
    [
      'a connect to several addresses',
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]),
    ],
    [
      'an error that says it is retryable (an upload that lost its lease)',
      Object.assign(new Error('the upload lost its cleanup lease'), { retryable: true }),
    ],
  ])('%s → 503 api_error with retry-after, internals hidden', (_name, err) => {
    expect(renderError(err, req, silent)).toEqual({
      status: 503,
      headers: { 'retry-after': '1' },
      body: {
        type: 'error',
        error: {
          type: 'api_error',
          message: 'a service this request needs is unavailable for the moment; retry shortly',
          details: { error_code: 'dependency_unavailable' },
        },
        request_id: 'req_TEST',
      },
    });
  });

  it.each<[string, unknown]>([
    ['a unique violation', pgError('23505')],
    ['a syntax error', pgError('42601')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['retryable other than true', Object.assign(new Error('x'), { retryable: 'yes' })],
  ])('%s stays a 500', (_name, err) => {
    expect(renderError(err, req, silent).status).toBe(500);
  });
});
