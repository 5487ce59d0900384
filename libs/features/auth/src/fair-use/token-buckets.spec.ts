import { TokenBuckets } from './token-buckets';

/** A clock the test moves by hand: no real time passes in these tests. */
function fakeClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const rule = { ratePerSecond: 2, burst: 3 };
const one = (key: string) => [{ key, rule, kind: 'k' }];

describe('TokenBuckets', () => {
  it('admits a burst, then refuses with the wait until the next token', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now);
    const results = Array.from({ length: 5 }, () => b.take(one('k')));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results[3]).toEqual({ ok: false, retryAfterMs: 500, refusedBy: 'k' });
  });

  it('refills at the rate and never beyond the burst', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now);
    for (let i = 0; i < 3; i++) b.take(one('k'));
    clock.advance(500); // one token at 2/s
    expect(b.take(one('k')).ok).toBe(true);
    expect(b.take(one('k')).ok).toBe(false);
    clock.advance(3_600_000); // an hour idle: still only `burst`
    const admitted = Array.from({ length: 10 }, () => b.take(one('k'))).filter((r) => r.ok);
    expect(admitted).toHaveLength(3);
  });

  it('keeps keys apart: one key exhausted leaves another full', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now);
    for (let i = 0; i < 10; i++) b.take(one('a'));
    expect(Array.from({ length: 3 }, () => b.take(one('b')).ok)).toEqual([true, true, true]);
  });

  it('takes from all named buckets or none: a refusal by one spends nothing of the other', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now);
    const workspace = { key: 'ws', rule: { ratePerSecond: 1, burst: 4 }, kind: 'workspace' };
    const keyA = { key: 'a', rule: { ratePerSecond: 1, burst: 2 }, kind: 'credential' };
    const keyB = { key: 'b', rule: { ratePerSecond: 1, burst: 3 }, kind: 'credential' };
    // Key a: 2 admitted, then refused by its own bucket; the Workspace gave only 2 tokens.
    const a = Array.from({ length: 5 }, () => b.take([keyA, workspace]).ok);
    expect(a).toEqual([true, true, false, false, false]);
    // Key b (burst 3) gets the Workspace's remaining 2, then the Workspace refuses it.
    const bb = Array.from({ length: 3 }, () => b.take([keyB, workspace]));
    expect(bb.map((r) => r.ok)).toEqual([true, true, false]);
    expect(bb[2]).toEqual({ ok: false, retryAfterMs: 1000, refusedBy: 'workspace' });
  });

  it('answers the longest wait among the empty buckets', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now);
    const slow = { key: 's', rule: { ratePerSecond: 0.1, burst: 1 }, kind: 'slow' };
    const fast = { key: 'f', rule: { ratePerSecond: 10, burst: 1 }, kind: 'fast' };
    expect(b.take([slow, fast]).ok).toBe(true);
    expect(b.take([slow, fast])).toEqual({ ok: false, retryAfterMs: 10_000, refusedBy: 'slow' });
  });

  it('beyond its bound it forgets a full bucket first (nothing is lost), else the oldest', () => {
    const clock = fakeClock();
    const b = new TokenBuckets(clock.now, 2);
    for (let i = 0; i < 3; i++) b.take(one('a')); // a: empty
    b.take(one('b')); // b: 2 of 3 left
    clock.advance(500); // b full again (one token at 2/s); a has 1 token
    b.take(one('c')); // room is made by forgetting b, the full one: a keeps its state
    expect(b.size).toBe(2);
    expect(b.take(one('a')).ok).toBe(true);
    expect(b.take(one('a')).ok).toBe(false);
    // None full: the oldest (a) is forgotten and comes back full.
    b.take(one('c'));
    b.take(one('d'));
    expect(b.size).toBe(2);
    expect(Array.from({ length: 3 }, () => b.take(one('a')).ok)).toEqual([true, true, true]);
  });

  it('a clock that goes back adds no tokens', () => {
    let t = 10_000;
    const b = new TokenBuckets(() => t);
    for (let i = 0; i < 3; i++) b.take(one('k'));
    t -= 5_000;
    expect(b.take(one('k')).ok).toBe(false);
  });
});
