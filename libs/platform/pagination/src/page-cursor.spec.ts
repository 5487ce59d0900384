import { DomainError } from '@mango/domain-kernel';
import { decodeCursor, encodeCursor, parseLimit, toPage } from './page-cursor';

describe('page cursors', () => {
  it('round-trip the last key, the order and the list they belong to', () => {
    const page = encodeCursor({ scope: 'agents', order: 'desc', after: 'agent_X' });
    expect(decodeCursor(page, { scope: 'agents', order: 'desc' }).after).toBe('agent_X');
  });

  it.each([
    ['garbage', 'not-base64-json'],
    ['a JSON object', Buffer.from('{"a":1}').toString('base64url')],
    ['an empty key', Buffer.from('["agents","desc",""]').toString('base64url')],
    ['an unknown order', Buffer.from('["agents","sideways","x"]').toString('base64url')],
  ])('reject %s with invalid_request', (_label, page) => {
    expect(() => decodeCursor(page, { scope: 'agents', order: 'desc' })).toThrow(DomainError);
  });

  it('round-trip a prev_page cursor, refused by a list that pages only forwards', () => {
    const page = encodeCursor({ scope: 'sessions', order: 'asc', after: 'sesn_X', direction: 'before' });
    expect(decodeCursor(page, { scope: 'sessions', order: 'asc', backwards: true })).toEqual({
      scope: 'sessions',
      order: 'asc',
      after: 'sesn_X',
      direction: 'before',
    });
    expect(() => decodeCursor(page, { scope: 'sessions', order: 'asc' })).toThrow(DomainError);
    const forward = encodeCursor({ scope: 'sessions', order: 'asc', after: 'sesn_X' });
    expect(
      decodeCursor(forward, { scope: 'sessions', order: 'asc', backwards: true }).direction,
    ).toBeUndefined();
  });

  it('reject a cursor from another list or another order', () => {
    const page = encodeCursor({ scope: 'environments', order: 'desc', after: 'env_X' });
    expect(() => decodeCursor(page, { scope: 'agents', order: 'desc' })).toThrow(/different list/);
    expect(() => decodeCursor(page, { scope: 'environments', order: 'asc' })).toThrow(/different order/);
  });
});

describe('limit', () => {
  it('defaults to 20 and accepts 1–1000', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('1000')).toBe(1000);
  });
  it.each(['0', '1001', '-1', '2.5', 'ten', ['1', '2']])('rejects %j', (raw) => {
    expect(() => parseLimit(raw)).toThrow(/limit must be an integer from 1 to 1000/);
  });
});

describe('toPage', () => {
  const cursor = { scope: 's', order: 'asc' as const };
  it('uses the extra row only to decide that a next page exists', () => {
    const page = toPage(
      ['a', 'b', 'c'],
      2,
      (r) => r,
      (r) => r.toUpperCase(),
      cursor,
    );
    expect(page.data).toEqual(['A', 'B']);
    expect(decodeCursor(page.next_page!, cursor).after).toBe('b');
  });
  it('has no next page when the rows fit', () => {
    expect(
      toPage(
        ['a', 'b'],
        2,
        (r) => r,
        (r) => r,
        cursor,
      ).next_page,
    ).toBeNull();
  });
});
