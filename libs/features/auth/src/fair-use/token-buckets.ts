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
  rule: BucketRule;
}

/** Buckets remembered at most. Beyond it a full one is forgotten first (it would come back full anyway). */
export const DEFAULT_MAX_BUCKETS = 100_000;

/** How many of the oldest buckets are looked at for a full one before the oldest is forgotten regardless. */
const EVICTION_SCAN = 64;

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
    const buckets: Bucket[] = [];
    let refused: { waitMs: number; kind: K } | undefined;
    for (const { key, rule, kind } of keys) {
      const bucket = this.refilled(key, rule, t);
      buckets.push(bucket);
      if (bucket.tokens >= 1) continue;
      const waitMs = ((1 - bucket.tokens) / rule.ratePerSecond) * 1000;
      if (!refused || waitMs > refused.waitMs) refused = { waitMs, kind };
    }
    if (refused) return { ok: false, retryAfterMs: refused.waitMs, refusedBy: refused.kind };
    for (const bucket of buckets) bucket.tokens -= 1;
    return { ok: true };
  }

  /** Buckets held now (bounded by `maxBuckets`). */
  get size(): number {
    return this.buckets.size;
  }

  private refilled(key: string, rule: BucketRule, t: number): Bucket {
    let b = this.buckets.get(key);
    if (b) {
      b.rule = rule;
      b.tokens = Math.min(rule.burst, b.tokens + (Math.max(0, t - b.at) / 1000) * rule.ratePerSecond);
      b.at = t;
      return b;
    }
    if (this.buckets.size >= this.maxBuckets) this.forgetOne(t);
    b = { tokens: rule.burst, at: t, rule };
    this.buckets.set(key, b);
    return b;
  }

  /**
   * Makes room for one bucket: the first full one among the oldest (forgetting it changes nothing), else
   * the oldest (it comes back full: at worst one extra burst for that key).
   */
  private forgetOne(t: number): void {
    let scanned = 0;
    let oldest: string | undefined;
    for (const [key, b] of this.buckets) {
      oldest ??= key;
      if (b.tokens + (Math.max(0, t - b.at) / 1000) * b.rule.ratePerSecond >= b.rule.burst) {
        this.buckets.delete(key);
        return;
      }
      if (++scanned >= EVICTION_SCAN) break;
    }
    if (oldest !== undefined) this.buckets.delete(oldest);
  }
}
