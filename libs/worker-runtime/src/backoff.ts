/** Jittered exponential backoff: base·2^attempt, capped, with ±25% jitter (random is an argument for tests). */
export function backoffMs(
  attempt: number,
  options: { baseMs?: number; maxMs?: number; random?: () => number } = {},
): number {
  const base = options.baseMs ?? 250;
  const max = options.maxMs ?? 10_000;
  const random = options.random ?? Math.random;
  const raw = Math.min(max, base * 2 ** attempt);
  return Math.round(raw * (0.75 + random() * 0.5));
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
