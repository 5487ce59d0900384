import { createHash } from 'node:crypto';
import { conflict, invalidRequest } from '@mango/domain-kernel';

/** The request header (docs/api-guide.md, "Idempotent requests"). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set to `true` on a response replayed from an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
/** Longest accepted key (the hosted service and Stripe take 255 characters). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long a client is asked to wait before sending a request again while its key is in use. */
export const IDEMPOTENCY_IN_PROGRESS_RETRY_AFTER_S = 1;

/** A key is 1–255 visible ASCII characters (a UUID is the usual choice). */
export function parseIdempotencyKey(value: string | string[]): string {
  if (Array.isArray(value))
    throw invalidRequest('send one Idempotency-Key header, not several', { header: 'Idempotency-Key' });
  if (value.length === 0 || value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(value))
    throw invalidRequest(
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (a UUID, for example)`,
      { header: 'Idempotency-Key' },
    );
  return value;
}

/**
 * What a repeat must match: the method, the path with its query and the body (its JSON text as parsed:
 * a client repeating its request sends the same bytes). SHA-256, hex.
 */
export function requestDigest(method: string, pathAndQuery: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${pathAndQuery}\n`)
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('hex');
}

/** The key was first used for another request: 409, nothing written. */
export function idempotencyKeyReused(first: { method: string; path: string }) {
  return conflict(
    `this Idempotency-Key was already used for a different request (${first.method} ${first.path} with another body or path); use a new key for a new request`,
    { error_code: 'idempotency_key_reused' },
  );
}

/** A request with the same key is still running: 409 with retry-after; the client sends it again. */
export function idempotencyInProgress() {
  return conflict(
    'a request with this Idempotency-Key is still in progress; send it again after retry-after seconds to get its response',
    { error_code: 'idempotency_in_progress' },
  );
}
