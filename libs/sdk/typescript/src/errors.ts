import type { ErrorType, WorkLeaseState } from './types';

/** `type` of errors raised by the SDK itself rather than read from an error envelope. */
export type ClientErrorType = 'connection_error' | 'request_aborted';

export interface MangoErrorInit {
  status?: number;
  type: ErrorType | ClientErrorType | (string & {});
  message: string;
  details?: Record<string, unknown>;
  requestId?: string;
  headers?: Headers;
  cause?: unknown;
}

/**
 * Base class of every error thrown by a Mango API call. For HTTP errors, `status` is the response
 * status and `type`, `message`, `details` and `requestId` come from the error envelope
 * (`{type:"error", error:{type, message, details?}, request_id}`), falling back to the `request-id`
 * header when the body is not an envelope.
 */
export class MangoError extends Error {
  /** HTTP status, or undefined when no response was received. */
  readonly status: number | undefined;
  /** The envelope's `error.type` (e.g. `not_found_error`), or an SDK-side type such as `connection_error`. */
  readonly type: ErrorType | ClientErrorType | (string & {});
  /** Machine-readable extra facts (`error.details`), when the error type defines them. */
  readonly details: Record<string, unknown> | undefined;
  /** The request's id (`req_…`), from the envelope or the `request-id` header. */
  readonly requestId: string | undefined;
  /** Response headers, when a response was received. */
  readonly headers: Headers | undefined;

  constructor(init: MangoErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.type = init.type;
    this.details = init.details;
    this.requestId = init.requestId;
    this.headers = init.headers;
  }
}

/** 400 — malformed or invalid request (`invalid_request_error`). */
export class BadRequestError extends MangoError {}

/** 401 — missing, malformed, unknown, revoked or expired credential (`authentication_error`). */
export class AuthenticationError extends MangoError {}

/** 403 — the credential's kind or scope does not allow the operation (`permission_error`). */
export class PermissionDeniedError extends MangoError {}

/** 404 — unknown resource, wrong id prefix, or another workspace's resource (`not_found_error`). */
export class NotFoundError extends MangoError {}

/** 409 — state conflict: version mismatch, duplicate name, archived object, Work state, … */
export class ConflictError extends MangoError {}

/**
 * 412 — heartbeat precondition failed (`heartbeat_precondition_failed`); the lease was not extended.
 * `currentState` is the server's view of the lease (`error.details.current_state`).
 */
export class PreconditionFailedError extends MangoError {
  readonly currentState: WorkLeaseState | undefined;

  constructor(init: MangoErrorInit) {
    super(init);
    const state = init.details?.['current_state'];
    this.currentState = isObject(state) ? (state as unknown as WorkLeaseState) : undefined;
  }
}

/** 413 — the request body exceeds the server's limit (`request_too_large`). */
export class RequestTooLargeError extends MangoError {}

/** 429 — rate limited (`rate_limit_error`). */
export class RateLimitError extends MangoError {}

/** 5xx — unexpected server error (`api_error`) or an unavailable upstream. */
export class InternalServerError extends MangoError {}

/** No usable response: the connection failed, was reset, or the request timed out. */
export class ConnectionError extends MangoError {
  constructor(init: Omit<MangoErrorInit, 'type'> & { type?: string }) {
    super({ ...init, type: init.type ?? 'connection_error' });
  }
}

/** The request did not complete within `timeoutMs`. */
export class ConnectionTimeoutError extends ConnectionError {}

/** The caller aborted the request through its `signal`. Never retried. */
export class RequestAbortedError extends MangoError {
  constructor(init: Omit<MangoErrorInit, 'type'>) {
    super({ ...init, type: 'request_aborted' });
  }
}

const DEFAULT_TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  412: 'heartbeat_precondition_failed',
  413: 'request_too_large',
  429: 'rate_limit_error',
};

/** Builds the typed error for a non-2xx response from its status, headers and raw body text. */
export function errorFromResponse(status: number, headers: Headers, bodyText: string): MangoError {
  let parsed: unknown;
  try {
    parsed = bodyText === '' ? undefined : JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const envelope = isObject(parsed) && isObject(parsed['error']) ? parsed : undefined;
  const error = envelope?.['error'] as Record<string, unknown> | undefined;

  const type =
    typeof error?.['type'] === 'string'
      ? error['type']
      : (DEFAULT_TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'unknown_error'));
  const message =
    typeof error?.['message'] === 'string' && error['message'] !== ''
      ? error['message']
      : fallbackMessage(status, bodyText);
  const details = isObject(error?.['details']) ? (error['details'] as Record<string, unknown>) : undefined;
  const requestId =
    typeof envelope?.['request_id'] === 'string'
      ? envelope['request_id']
      : (headers.get('request-id') ?? undefined);

  const init: MangoErrorInit = { status, type, message, details, requestId, headers };
  const ErrorClass = errorClassFor(status);
  return new ErrorClass(init);
}

function errorClassFor(status: number): new (init: MangoErrorInit) => MangoError {
  switch (status) {
    case 400:
      return BadRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 412:
      return PreconditionFailedError;
    case 413:
      return RequestTooLargeError;
    case 429:
      return RateLimitError;
    default:
      return status >= 500 ? InternalServerError : MangoError;
  }
}

function fallbackMessage(status: number, bodyText: string): string {
  const snippet = bodyText.replace(/\s+/g, ' ').trim().slice(0, 200);
  return snippet === '' ? `HTTP ${status}` : `HTTP ${status}: ${snippet}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
