/** Delivery attempts per event and endpoint (docs/api-guide.md, Webhooks: at most 3, then dropped). */
export const WEBHOOK_MAX_ATTEMPTS = 3;

/** Hosted §3.12 backoff bounds: 5–120 s. */
export const WEBHOOK_RETRY_BASE_MS = 5_000;
export const WEBHOOK_RETRY_CAP_MS = 120_000;

/**
 * The wait after failed attempt `attempt` (1-based) before the next one: exponential from `baseMs`
 * (×6 per attempt), stretched by a jitter factor 1 + `random()` ∈ [1, 2) and capped at `capMs`: with the
 * default base 5–10 s after the first attempt and 30–60 s after the second, inside the 5–120 s of docs/api-guide.md, Webhooks.
 * `random` is the caller's (the workflow's deterministic one).
 */
export function retryDelayMs(
  attempt: number,
  random: () => number,
  baseMs: number = WEBHOOK_RETRY_BASE_MS,
  capMs: number = WEBHOOK_RETRY_CAP_MS,
): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempt must be an integer ≥ 1');
  const step = Math.min(capMs, baseMs * 6 ** (attempt - 1));
  const r = Math.min(Math.max(random(), 0), 0.999_999);
  return Math.min(capMs, Math.round(step * (1 + r)));
}

/** Is an HTTP status a successful delivery? 2xx only: a redirect is refused, not followed. */
export const isDelivered = (status: number): boolean => status >= 200 && status < 300;
