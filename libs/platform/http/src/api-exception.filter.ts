import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { DomainError, ErrorCode, RateLimitedError } from '@mango/domain-kernel';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { isDependencyUnavailable, UNAVAILABLE_RETRY_AFTER_S } from './dependency-unavailable';
import { codeForHttpStatus, ErrorEnvelope, errorTypeOf, httpStatusOf } from './error-mapping';

const FRAMEWORK_MESSAGES: Partial<Record<number, string>> = {
  404: 'no such route',
  413: 'request body is too large',
};

/**
 * Renders every failure as the documented envelope. A dependency that cannot be reached (the database
 * restarting) is a logged 503 `api_error` with `retry-after`; any other unknown error a logged 500.
 */
export function renderError(
  err: unknown,
  req: Request,
  log: Logger,
): { status: number; body: ErrorEnvelope; headers?: Record<string, string> } {
  const request_id = req.requestId ?? 'req_unknown';
  if (err instanceof DomainError) {
    const status = httpStatusOf(err.code);
    const error: ErrorEnvelope['error'] = {
      type: err.errorType ?? errorTypeOf(err.code),
      message: err.message,
    };
    if (err.details) error.details = err.details;
    // A fair-use refusal tells the client when to try again (the SDKs wait that long before retrying).
    if (err instanceof RateLimitedError)
      return {
        status,
        headers: { 'retry-after': String(err.retryAfterSeconds) },
        body: { type: 'error', error, request_id },
      };
    return { status, body: { type: 'error', error, request_id } };
  }
  const status = statusOfFrameworkError(err);
  if (status !== undefined && status < 500) {
    const code = codeForHttpStatus(status);
    const message = frameworkMessage(err, status);
    return {
      status: httpStatusOf(code),
      body: { type: 'error', error: { type: errorTypeOf(code), message }, request_id },
    };
  }
  if (isDependencyUnavailable(err)) {
    log.warn({ err, request_id, method: req.method, path: req.path }, 'dependency unavailable');
    return {
      status: 503,
      headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) },
      body: {
        type: 'error',
        error: {
          type: errorTypeOf(ErrorCode.Internal),
          message: 'a service this request needs is unavailable for the moment; retry shortly',
          details: { error_code: 'dependency_unavailable' },
        },
        request_id,
      },
    };
  }
  log.error({ err, request_id, method: req.method, path: req.path }, 'unhandled error');
  return {
    status: 500,
    body: {
      type: 'error',
      error: { type: errorTypeOf(ErrorCode.Internal), message: 'internal error' },
      request_id,
    },
  };
}

/** Writes a rendered error: its status, its headers (`retry-after` on a 503 or 429) and the envelope. */
export function sendError(res: Response, rendered: ReturnType<typeof renderError>): void {
  for (const [name, value] of Object.entries(rendered.headers ?? {})) res.setHeader(name, value);
  res.status(rendered.status).json(rendered.body);
}

function statusOfFrameworkError(err: unknown): number | undefined {
  if (err instanceof HttpException) return err.getStatus();
  if (typeof err === 'object' && err !== null) {
    const s =
      (err as { status?: unknown; statusCode?: unknown }).status ??
      (err as { statusCode?: unknown }).statusCode;
    if (typeof s === 'number' && s >= 400 && s < 600) return s;
  }
  return undefined;
}

function frameworkMessage(err: unknown, status: number): string {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.parse.failed') return 'request body is not valid JSON';
  // Nest turns body-parser failures into HttpExceptions that carry JSON.parse's message.
  if (status === 400 && err instanceof HttpException && /JSON/.test(err.message))
    return 'request body is not valid JSON';
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: unknown }).limit;
    return typeof limit === 'number'
      ? `request body is too large: this server accepts at most ${limit} bytes`
      : 'request body is too large';
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return 'unsupported request body encoding';
  return FRAMEWORK_MESSAGES[status] ?? 'invalid request';
}

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    sendError(res, renderError(exception, req, this.log));
  }
}
