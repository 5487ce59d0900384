import { DomainError } from '@mango/domain-kernel';
import { DEFAULT_JSON_LIMITS, jsonLimitError, scanJson } from './json-limits';

const scan = (text: string, limits = { maxDepth: 3, maxValues: 10 }) => scanJson(Buffer.from(text), limits);

describe('scanJson', () => {
  it.each([
    ['{}', true],
    ['[[[]]]', true],
    ['[[[[]]]]', false],
    ['{"a":{"b":{"c":1}}}', true],
    ['{"a":{"b":{"c":{}}}}', false],
  ])('depth of %s within 3: %s', (text, ok) => {
    expect(scan(text).ok).toBe(ok);
    if (!ok) expect(scan(text)).toEqual({ ok: false, exceeded: 'depth' });
  });

  it('brackets, braces and commas inside strings (escaped quotes too) are text, not structure', () => {
    expect(scan('["[[[[[[", "{{{{,,,,,,,,,,,,", "\\"[[[[[[\\\\", "]]"]')).toEqual({
      ok: true,
      escapesToCheck: false,
    });
  });

  it('counts array elements and object members: 10 pass, 11 are too many', () => {
    expect(scan(JSON.stringify(new Array(9).fill(0))).ok).toBe(true); // 1 array + 8 commas + 1
    expect(scan(JSON.stringify(new Array(10).fill(0)))).toEqual({ ok: false, exceeded: 'values' });
    const members = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, i]));
    expect(scan(JSON.stringify(members))).toEqual({ ok: false, exceeded: 'values' });
  });

  it.each([
    ['"\\u0000"', true],
    ['"\\u0000 in the middle"', true],
    ['{"\\uD800":1}', true],
    ['"\\udfff"', true],
    ['"\\uDbFF"', true],
    ['"\\u00e9 \\u0041 \\uE000 \\uc800"', false],
    ['"\\\\u0000"', false], // an escaped backslash, then the text u0000
    ['"no escapes"', false],
  ])('%s may hold unstorable text: %s', (text, flagged) => {
    expect(scan(text, DEFAULT_JSON_LIMITS)).toEqual({ ok: true, escapesToCheck: flagged });
  });

  it('a malformed or truncated text never throws (JSON.parse reports it afterwards)', () => {
    for (const text of ['"unterminated', '"\\', '[[[', ']]]]}}}', '', '"\\u00']) {
      expect(() => scan(text, DEFAULT_JSON_LIMITS)).not.toThrow();
    }
  });

  it('scans 32 MB of long strings and 4 million numbers in one pass each, without recursion', () => {
    const strings = Buffer.from(JSON.stringify({ text: 'x'.repeat(32 * 1024 * 1024 - 20) }));
    expect(scanJson(strings, DEFAULT_JSON_LIMITS)).toEqual({ ok: true, escapesToCheck: false });
    const zeros = Buffer.from(JSON.stringify(new Array(4_000_000).fill(0)));
    expect(scanJson(zeros, DEFAULT_JSON_LIMITS)).toEqual({ ok: false, exceeded: 'values' });
    const deep = Buffer.from('['.repeat(1_000_000) + ']'.repeat(1_000_000));
    expect(scanJson(deep, DEFAULT_JSON_LIMITS)).toEqual({ ok: false, exceeded: 'depth' });
  });

  it('too deep is a 400 invalid request; too many values a 413, both naming the limit', () => {
    const deep = jsonLimitError('depth', DEFAULT_JSON_LIMITS);
    expect(deep).toBeInstanceOf(DomainError);
    expect(deep.code).toBe('invalid_request');
    expect(deep.message).toMatch(/nested deeper than 128 levels/);
    const many = jsonLimitError('values', DEFAULT_JSON_LIMITS);
    expect(many.code).toBe('too_large');
    expect(many.message).toMatch(/more than 1000000 JSON values/);
  });
});
