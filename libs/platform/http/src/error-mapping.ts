import { assertNever, ErrorCode } from '@mango/domain-kernel';

/** The one place that turns a domain error code into an HTTP status and an envelope `error.type`. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.InvalidRequest:
      return 400;
    case ErrorCode.Authentication:
      return 401;
    case ErrorCode.Permission:
      return 403;
    case ErrorCode.NotFound:
      return 404;
    case ErrorCode.Conflict:
      return 409;
    case ErrorCode.PreconditionFailed:
      return 412;
    case ErrorCode.TooLarge:
      return 413;
    case ErrorCode.RateLimited:
      return 429;
    case ErrorCode.Internal:
      return 500;
    default:
      return assertNever(code, 'error code');
  }
}

export function errorTypeOf(code: ErrorCode): string {
  switch (code) {
    case ErrorCode.InvalidRequest:
      return 'invalid_request_error';
    case ErrorCode.Authentication:
      return 'authentication_error';
    case ErrorCode.Permission:
      return 'permission_error';
    case ErrorCode.NotFound:
      return 'not_found_error';
    // General state conflicts use the hosted service's type; specific routes override it (memory).
    case ErrorCode.Conflict:
      return 'invalid_request_error';
    case ErrorCode.PreconditionFailed:
      return 'heartbeat_precondition_failed';
    case ErrorCode.TooLarge:
      return 'request_too_large';
    case ErrorCode.RateLimited:
      return 'rate_limit_error';
    case ErrorCode.Internal:
      return 'api_error';
    default:
      return assertNever(code, 'error code');
  }
}

/** Status codes that frameworks raise on their own (body parser, router) mapped to our codes. */
export function codeForHttpStatus(status: number): ErrorCode {
  if (status === 401) return ErrorCode.Authentication;
  if (status === 403) return ErrorCode.Permission;
  if (status === 404 || status === 405) return ErrorCode.NotFound;
  if (status === 409) return ErrorCode.Conflict;
  if (status === 413) return ErrorCode.TooLarge;
  if (status === 429) return ErrorCode.RateLimited;
  if (status >= 400 && status < 500) return ErrorCode.InvalidRequest;
  return ErrorCode.Internal;
}

export interface ErrorEnvelope {
  type: 'error';
  error: { type: string; message: string; details?: Record<string, unknown> };
  request_id: string;
}
