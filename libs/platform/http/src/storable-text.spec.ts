import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { assertStorableText, findUnstorableText, unstorableReason } from './storable-text';

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['plain', 'hello', undefined],
    ['empty', '', undefined],
    ['emoji (a surrogate pair)', 'ok \ud83d\ude00', undefined],
    ['U+FFFD and other controls', '\ufffd\u0001\u007f\t', undefined],
    ['NUL', 'a\u0000b', 'nul_character'],
    ['lone high surrogate', 'a\ud800b', 'lone_surrogate'],
    ['lone low surrogate', '\udc00', 'lone_surrogate'],
    ['high surrogate at the end', 'x\ud83d', 'lone_surrogate'],
    ['reversed pair', '\ude00\ud83d', 'lone_surrogate'],
  ])('%s', (_name, text, reason) => {
    expect(unstorableReason(text)).toBe(reason);
  });

  it.each([
    [{ name: 'a\u0000' }, 'name'],
    [{ metadata: { team: 'x', tier: '\ud800' } }, 'metadata.tier'],
    [{ metadata: { 'a\u0000': 'x' } }, 'metadata["a\\u0000"]'],
    [{ metadata: { 'a b': '\u0000' } }, 'metadata["a b"]'],
    [{ events: [{ content: [{ text: 'ok' }, { text: '\u0000' }] }] }, 'events[0].content[1].text'],
    ['\u0000', ''],
    [['ok', '\ud800'], '[1]'],
  ])('names the JSON path of %j', (value, field) => {
    expect(findUnstorableText(value)?.field).toBe(field);
  });

  it('reports the first offending field in document order, and accepts clean documents', () => {
    expect(findUnstorableText({ a: { b: '\u0000' }, c: '\u0000' })?.field).toBe('a.b');
    expect(findUnstorableText({ a: [1, true, null, { b: 'x' }], c: 'y' })).toBeUndefined();
  });

  it('walks a deeply nested document without overflowing the stack', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableText(deep)?.reason).toBe('nul_character');
  });

  it('throws a 400 invalid_request_error naming the field and where it was', () => {
    let err: unknown;
    try {
      assertStorableText('x\u0000', 'file.filename');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe(ErrorCode.InvalidRequest);
    expect((err as DomainError).details).toEqual({
      field: 'file.filename',
      location: 'form',
      reason: 'nul_character',
    });
    expect((err as DomainError).message).toMatch(/^form part file\.filename contains a NUL/);
    expect(() => assertStorableText('fine.txt', 'file.filename')).not.toThrow();
  });
});
