import { isRetryableStatus, MangoError, newIdempotencyKey } from '@mango/sdk';

/**
 * The Idempotency-Key of one form's or button's write (docs/api-guide.md, "Idempotent requests"). The SDK
 * reuses a key across its own retries of one call; a user who presses the button again after a network
 * error starts a new call, so the console keeps the key itself: the same request retried after an outcome
 * the console could not know (no response, a 5xx, 408, 429, or 409 idempotency_in_progress) is sent with
 * the key of the attempt before — the server then replays the first answer instead of writing twice. A
 * success, a refusal (any other 4xx) or a changed request takes a new key.
 */
export class RetryKey {
  private last?: { key: string; request: string };

  constructor(private readonly newKey: () => string = newIdempotencyKey) {}

  /** The key for an attempt at `request` (anything JSON: the call's parameters). */
  next(request: unknown): string {
    const fingerprint = JSON.stringify(request ?? null);
    if (this.last?.request !== fingerprint) this.last = { key: this.newKey(), request: fingerprint };
    return this.last.key;
  }

  /** What the attempt came to: the key is kept only when its outcome is unknown. */
  settle(error?: unknown): void {
    if (error === undefined || !outcomeUnknown(error)) this.last = undefined;
  }
}

/** Whether a failed write may have run anyway (so its retry must carry the same key). */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof MangoError)) return true; // no response at all (fetch failed)
  if (error.status === undefined) return true; // connection error, timeout
  if (error.status === 409) return error.details?.error_code === 'idempotency_in_progress';
  return isRetryableStatus(error.status);
}
