import { DEFAULT_WORKSPACE_ID, isId, newId, pooledRandomBytes } from './ids';

describe('ids', () => {
  it('are the kind prefix followed by a 26-character ULID', () => {
    const id = newId('agent');
    expect(id).toMatch(/^agent_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(isId('agent', id)).toBe(true);
  });

  it('sort by creation time, even within one millisecond', () => {
    const ids = Array.from({ length: 200 }, () => newId('environment'));
    expect([...ids].sort()).toEqual(ids);
    const earlier = newId('agent', Date.parse('2026-01-01T00:00:00Z'));
    const later = newId('agent', Date.parse('2026-06-01T00:00:00Z'));
    expect(earlier < later).toBe(true);
  });

  it('reject the wrong prefix, truncation and non-strings', () => {
    const id = newId('agent');
    expect(isId('environment', id)).toBe(false);
    expect(isId('agent', id.slice(0, -1))).toBe(false);
    expect(isId('agent', `${id}x`)).toBe(false);
    expect(isId('agent', id.toLowerCase())).toBe(false);
    expect(isId('agent', 42)).toBe(false);
  });

  it('accept the default workspace id as a workspace id only', () => {
    expect(isId('workspace', DEFAULT_WORKSPACE_ID)).toBe(true);
    expect(isId('agent', DEFAULT_WORKSPACE_ID)).toBe(false);
  });

  it('pooled random bytes: own buffers of the size asked, never repeated or zeroed, across pool refills', () => {
    const seen = new Set<string>();
    const zero = Buffer.alloc(32);
    for (let i = 0; i < 400; i++) {
      // Interleaved with ULIDs, which draw from the same pool.
      newId('work');
      const b = pooledRandomBytes(32);
      expect(b.length).toBe(32);
      expect(b.equals(zero)).toBe(false);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(400);
    const held = pooledRandomBytes(16);
    const copy = Buffer.from(held);
    for (let i = 0; i < 300; i++) pooledRandomBytes(32);
    expect(held.equals(copy)).toBe(true);
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });
});
