import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { parseIdempotencyKey, requestDigest } from './idempotency-key';

describe('parseIdempotencyKey', () => {
  it.each(['a', 'k'.repeat(255), '0b0e5c52-7d0f-4ad4-9a4e-1f1f0bbd0f1e', '!~'])('accepts %p', (key) => {
    expect(parseIdempotencyKey(key)).toBe(key);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['non-ASCII', 'clé'],
    ['several headers', ['a', 'b']],
  ])('refuses %s with 400 naming the header', (_name, key) => {
    let err: unknown;
    try {
      parseIdempotencyKey(key);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe(ErrorCode.InvalidRequest);
    expect((err as DomainError).message).toMatch(/Idempotency-Key/);
  });
});

describe('requestDigest', () => {
  const base = requestDigest('POST', '/v1/agents', { name: 'a' });
  it('is the same for the same method, path and body', () => {
    expect(requestDigest('POST', '/v1/agents', { name: 'a' })).toBe(base);
  });
  it.each([
    ['another body', requestDigest('POST', '/v1/agents', { name: 'b' })],
    ['another path', requestDigest('POST', '/v1/agents/agnt_1', { name: 'a' })],
    ['another query', requestDigest('POST', '/v1/agents?x=1', { name: 'a' })],
    ['another method', requestDigest('PUT', '/v1/agents', { name: 'a' })],
  ])('differs for %s', (_name, other) => {
    expect(other).not.toBe(base);
  });
});
