/**
 * Whether an unhandled error means a dependency (PostgreSQL, S3, Temporal) could not be reached (or the
 * server could not finish in time and the error says `retryable: true`), rather than a bug: the request was fine and a retry after a moment may succeed. Such errors answer 503 with
 * `retry-after`, not 500; the official SDKs retry any 5xx.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** SQLSTATE 08xxx (connection exception), 57P01–57P03 (server shutting down / starting), 53300 (too many connections). */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/** What node-postgres and TypeORM say when a connection dies or cannot be had in time. */
const MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
  /^Driver not Connected/,
];

/** Seconds a client should wait before retrying after a 503. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATE.test(e.code))) return true;
  // An error that says so itself (e.g. an upload that lost its cleanup lease while the server stalled).
  if ((err as { retryable?: unknown }).retryable === true) return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  // AggregateError (a connect to several addresses), TypeORM's QueryFailedError, `{ cause }` wrappers.
  const nested = [e.driverError, e.cause, ...((err as { errors?: unknown[] }).errors ?? [])];
  return nested.some((n) => isDependencyUnavailable(n, depth + 1));
}
