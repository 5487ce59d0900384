import type { SessionEventEntity } from './entities';
import { SessionLogCache } from './session-log-cache';

/** Events whose bodies are `size` JSON characters each (`{"t":"…"}` is 8 plus the text). */
function events(n: number, size = 10, from = 1): SessionEventEntity[] {
  return Array.from(
    { length: n },
    (_, i) => ({ seq: String(from + i), body: { t: 'x'.repeat(size - 8) } }) as unknown as SessionEventEntity,
  );
}

describe('SessionLogCache', () => {
  it('keeps a read log and grows it with the events read after it', () => {
    const cache = new SessionLogCache(1000);
    const first = events(3);
    cache.keep('s1', first);
    expect(cache.get('s1')).toBe(first);
    const grown = first.concat(events(2, 10, 4));
    cache.keep('s1', grown);
    expect(cache.get('s1')!.map((e) => e.seq)).toEqual(['1', '2', '3', '4', '5']);
    // A reader that started earlier and read less does not replace the longer log.
    cache.keep('s1', first);
    expect(cache.get('s1')).toHaveLength(5);
    cache.forget('s1');
    expect(cache.get('s1')).toBeUndefined();
  });

  it('stays within its bound by letting the least recently read Sessions go', () => {
    const cache = new SessionLogCache(100); // ten 10-character bodies
    cache.keep('a', events(4));
    cache.keep('b', events(4));
    cache.get('a'); // a is now the most recently read
    cache.keep('c', events(4)); // 120 > 100: b goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toHaveLength(4);
    expect(cache.get('c')).toHaveLength(4);
    // A growth is measured too: a grown to 9 events leaves room for it alone.
    cache.keep('a', cache.get('a')!.concat(events(5, 10, 5)));
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('a')).toHaveLength(9);
    // A log larger than the whole bound is not kept (and its older copy is let go).
    cache.keep('a', cache.get('a')!.concat(events(5, 10, 10)));
    expect(cache.get('a')).toBeUndefined();
  });
});
