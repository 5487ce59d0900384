import { DomainError, ErrorCode } from './domain-error';
import { applyMetadataPatch, parseMetadata } from './metadata';

const expectInvalid = (fn: () => unknown, message: RegExp) => {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(DomainError);
  expect((caught as DomainError).code).toBe(ErrorCode.InvalidRequest);
  expect((caught as DomainError).message).toMatch(message);
};

describe('metadata rules', () => {
  it('accepts up to 16 keys of ≤64 chars with values of ≤512 chars', () => {
    const input = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`k${i}`.padEnd(64, 'x'), 'v'.repeat(512)]),
    );
    expect(Object.keys(parseMetadata(input))).toHaveLength(16);
  });

  it('treats absent metadata as empty', () => {
    expect(parseMetadata(undefined)).toEqual({});
  });

  it.each([
    ['a 65-char key', { ['k'.repeat(65)]: 'v' }, /1–64 characters/],
    ['an empty key', { '': 'v' }, /1–64 characters/],
    ['a 513-char value', { k: 'v'.repeat(513) }, /exceeds 512/],
    ['a number value', { k: 5 }, /must be a string/],
    ['17 keys', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), /at most 16 keys/],
    ['an array', ['a'], /must be an object/],
    ['a string', 'str', /must be an object/],
  ])('rejects %s', (_label, input, message) => {
    expectInvalid(() => parseMetadata(input), message);
  });

  it('patches: strings upsert, null deletes, omitted keys are preserved', () => {
    expect(applyMetadataPatch({ a: '1', b: '2' }, { a: null, c: '3', b: '22' })).toEqual({ b: '22', c: '3' });
  });

  it('treats "" as a delete only when asked (Environments)', () => {
    expect(applyMetadataPatch({ a: '1' }, { a: '' })).toEqual({ a: '' });
    expect(applyMetadataPatch({ a: '1' }, { a: '' }, { deleteOnEmpty: true })).toEqual({});
  });

  it('rejects a patch that would exceed 16 keys, even though each entry is valid', () => {
    const current = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expectInvalid(() => applyMetadataPatch(current, { extra: 'v' }), /at most 16 keys/);
    expect(Object.keys(applyMetadataPatch(current, { k0: null, extra: 'v' }))).toHaveLength(16);
  });

  it('rejects non-string, non-null patch values', () => {
    expectInvalid(() => applyMetadataPatch({}, { a: 1 }), /string or null/);
  });
});
