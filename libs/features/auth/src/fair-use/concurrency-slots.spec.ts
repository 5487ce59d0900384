import { ConcurrencySlots } from './concurrency-slots';

describe('ConcurrencySlots', () => {
  const keys = (cred: string) => [
    { key: `cred:${cred}`, limit: 2, kind: 'credential' as const },
    { key: 'ws:1', limit: 3, kind: 'workspace' as const },
  ];

  it('admits up to each limit and names the first one that is full', () => {
    const s = new ConcurrencySlots();
    expect(s.acquire(keys('a')).ok).toBe(true);
    expect(s.acquire(keys('a')).ok).toBe(true);
    expect(s.acquire(keys('a'))).toEqual({ ok: false, full: 'credential' });
    expect(s.acquire(keys('b')).ok).toBe(true);
    expect(s.acquire(keys('b'))).toEqual({ ok: false, full: 'workspace' });
    expect(s.count('ws:1')).toBe(3);
  });

  it('a refusal takes nothing; a release frees one slot under every key, once', () => {
    const s = new ConcurrencySlots();
    const first = s.acquire(keys('a'));
    s.acquire(keys('a'));
    s.acquire(keys('a')); // refused
    expect(s.count('cred:a')).toBe(2);
    if (!first.ok) throw new Error('expected a slot');
    first.release();
    first.release();
    expect([s.count('cred:a'), s.count('ws:1')]).toEqual([1, 1]);
  });

  it('forgets keys with nothing held', () => {
    const s = new ConcurrencySlots();
    const r = s.acquire(keys('a'));
    if (r.ok) r.release();
    expect(s.size).toBe(0);
  });
});
