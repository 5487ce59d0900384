/**
 * Every failure the product reports to a caller is a DomainError with a code. One exhaustive mapping
 * (in @mango/platform-http) turns codes into HTTP statuses and error types; nothing else decides them.
 */
export enum ErrorCode {
  InvalidRequest = 'invalid_request',
  Authentication = 'authentication',
  Permission = 'permission',
  NotFound = 'not_found',
  Conflict = 'conflict',
  PreconditionFailed = 'precondition_failed',
  TooLarge = 'too_large',
  RateLimited = 'rate_limited',
  Internal = 'internal',
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Machine-readable extra facts for the caller (e.g. a lease's `current_state`). Never secrets. */
    readonly details?: Record<string, unknown>,
    /** Overrides the envelope's `error.type` where the API names a more specific one. */
    readonly errorType?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidRequest = (message: string, details?: Record<string, unknown>) =>
  new DomainError(ErrorCode.InvalidRequest, message, details);
export const notFound = (what: string, id?: string) =>
  new DomainError(ErrorCode.NotFound, id === undefined ? `${what} not found` : `${what} ${id} not found`);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new DomainError(ErrorCode.Conflict, message, details);
export const permissionDenied = (message = 'this credential may not perform this request') =>
  new DomainError(ErrorCode.Permission, message);
export const unauthenticated = (message = 'missing, invalid or revoked credential') =>
  new DomainError(ErrorCode.Authentication, message);

/**
 * 429 `rate_limit_error`: the request was fine but a fair-use limit refused it for now. The error
 * envelope is sent with `retry-after: <retryAfterSeconds>` (docs/api-guide.md "Fair use").
 */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    /** Whole seconds after which the same request may be admitted (at least 1). */
    readonly retryAfterSeconds: number,
    details?: Record<string, unknown>,
  ) {
    super(ErrorCode.RateLimited, message, details);
    this.name = 'RateLimitedError';
  }
}

export const rateLimited = (message: string, retryAfterSeconds: number, details?: Record<string, unknown>) =>
  new RateLimitedError(message, Math.max(1, Math.ceil(retryAfterSeconds)), details);
