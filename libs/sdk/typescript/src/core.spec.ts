import {
  encodeQuery,
  INITIAL_RETRY_DELAY_MS,
  isRetryableStatus,
  MAX_RETRY_DELAY_MS,
  retryDelayMs,
} from './core';

describe('encodeQuery', () => {
  it('encodes scalars, nested objects, arrays and dates the way the extended query parser reads them', () => {
    expect(
      encodeQuery({
        limit: 5,
        include_archived: false,
        page: 'a b&c',
        created_at: { gte: new Date('2026-01-01T00:00:00.000Z'), lte: undefined },
        tags: ['x', 'y'],
        skipped: null,
      }),
    ).toBe(
      '?limit=5&include_archived=false&page=a%20b%26c&created_at[gte]=2026-01-01T00%3A00%3A00.000Z&tags[]=x&tags[]=y',
    );
  });

  it('returns an empty string when nothing is set', () => {
    expect(encodeQuery(undefined)).toBe('');
    expect(encodeQuery({ a: undefined })).toBe('');
  });

  it('rejects values that have no query form', () => {
    expect(() => encodeQuery({ f: () => 1 })).toThrow(TypeError);
  });
});

describe('retry policy', () => {
  it('retries 408, 429 and 5xx only', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 412, 413, 429, 500, 502, 503, 504].filter(isRetryableStatus),
    ).toEqual([408, 429, 500, 502, 503, 504]);
  });

  it('backs off exponentially with at most 25 % downward jitter, capped', () => {
    expect(retryDelayMs(0, undefined, () => 0)).toBe(INITIAL_RETRY_DELAY_MS);
    expect(retryDelayMs(1, undefined, () => 0)).toBe(INITIAL_RETRY_DELAY_MS * 2);
    expect(retryDelayMs(2, undefined, () => 0.999)).toBeGreaterThanOrEqual(INITIAL_RETRY_DELAY_MS * 4 * 0.75);
    expect(retryDelayMs(20, undefined, () => 0)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('prefers a sane retry-after-ms / retry-after header', () => {
    expect(retryDelayMs(0, new Headers({ 'retry-after-ms': '42' }))).toBe(42);
    expect(retryDelayMs(0, new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryDelayMs(0, new Headers({ 'retry-after': '3600' }), () => 0)).toBe(INITIAL_RETRY_DELAY_MS);
    expect(retryDelayMs(0, new Headers({ 'retry-after': 'garbage' }), () => 0)).toBe(INITIAL_RETRY_DELAY_MS);
  });
});
