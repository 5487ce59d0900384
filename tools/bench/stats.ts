/** Shared by the benchmarks: percentiles of samples, and bounded concurrency for a burst of requests. */

/** The p-th percentile (0–100) of `xs` by nearest rank; NaN when there are no samples. */
export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** Runs `fn` over `items` with at most `width` in flight; results in the order of `items`. */
export async function pool<T, R>(
  items: T[],
  width: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
    }),
  );
  return out;
}
