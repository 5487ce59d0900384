/**
 * Token buckets keyed by a string (a credential or a Workspace), in this process's memory: each holds at
 * most `burst` tokens and refills at `ratePerSecond`; a request takes one. Pure apart from the clock it is
 * given, so tests run it on a fake clock.
 */
export interface BucketRule {
  /** Tokens added per second (may be fractional: 0.5 is one request every 2 s). */
  ratePerSecond: number;
  /** Most tokens a bucket holds: the requests admitted back to back after a quiet spell. */
  burst: number;
}

/** The verdict: taken, or how long until a token is there again and which bucket (its `kind`) refused. */
export type TakeResult<K extends string = string> =
  { ok: true } | { ok: false; retryAfterMs: number; refusedBy: K };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms of the clock). */
  at: number;
}

/** Buckets remembered at most; the least recently used is forgotten first (it comes back full). */
export const DEFAULT_MAX_BUCKETS = 100_000;

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly maxBuckets = DEFAULT_MAX_BUCKETS,
  ) {}

  /**
   * Takes one token from every bucket named, all or none: when any of them is empty nothing is taken,
   * and the answer is the longest wait among the empty ones (so a refusal by one limit never spends
   * another's tokens).
   */
  take<K extends string>(keys: ReadonlyArray<{ key: string; rule: BucketRule; kind: K }>): TakeResult<K> {
    const t = this.now();
    const seen = keys.map(({ key, rule, kind }) => ({ bucket: this.refilled(key, rule, t), rule, kind }));
    let refused: { waitMs: number; kind: K } | undefined;
    for (const { bucket, rule, kind } of seen) {
      if (bucket.tokens >= 1) continue;
      const waitMs = ((1 - bucket.tokens) / rule.ratePerSecond) * 1000;
      if (!refused || waitMs > refused.waitMs) refused = { waitMs, kind };
    }
    if (refused) return { ok: false, retryAfterMs: refused.waitMs, refusedBy: refused.kind };
    for (const { bucket } of seen) bucket.tokens -= 1;
    return { ok: true };
  }

  /** Buckets held now (bounded by `maxBuckets`). */
  get size(): number {
    return this.buckets.size;
  }

  private refilled(key: string, rule: BucketRule, t: number): Bucket {
    let b = this.buckets.get(key);
    if (b) {
      // Re-inserted so that the Map's order is least recently used first.
      this.buckets.delete(key);
      b.tokens = Math.min(rule.burst, b.tokens + (Math.max(0, t - b.at) / 1000) * rule.ratePerSecond);
      b.at = t;
    } else {
      b = { tokens: rule.burst, at: t };
      if (this.buckets.size >= this.maxBuckets) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
    }
    this.buckets.set(key, b);
    return b;
  }
}
