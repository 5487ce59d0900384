import type { IncomingMessage } from 'node:http';
import { DomainError } from '@mango/domain-kernel';
import { hasBody, refuseContentEncoding } from './request-body';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('request bodies', () => {
  it.each([
    [{}, false],
    [{ 'content-length': '0' }, false],
    [{ 'content-length': '1' }, true],
    [{ 'transfer-encoding': 'chunked' }, true],
  ])('%j has a body: %s', (headers, expected) => {
    expect(hasBody(req(headers))).toBe(expected);
  });

  it.each(['gzip', 'deflate', 'br', 'x-gzip', 'GZIP', 'identity, gzip', 'zstd'])(
    'Content-Encoding %s on a body is a 400 naming the header',
    (coding) => {
      const err = refuseContentEncoding(req({ 'content-encoding': coding, 'content-length': '10' }));
      expect(err).toBeInstanceOf(DomainError);
      expect(err?.code).toBe('invalid_request');
      expect(err?.message).toMatch(/must not be compressed: Content-Encoding .+ is not accepted/);
      expect(err?.details).toEqual({
        field: 'content-encoding',
        location: 'header',
        reason: 'content_encoding_unsupported',
      });
    },
  );

  it.each([
    [{ 'content-encoding': 'identity', 'content-length': '10' }],
    [{ 'content-encoding': ' Identity ', 'content-length': '10' }],
    [{ 'content-length': '10' }],
    // No body: nothing to decode, nothing to refuse.
    [{ 'content-encoding': 'gzip', 'content-length': '0' }],
    [{ 'content-encoding': 'gzip' }],
  ])('%j is accepted', (headers) => {
    expect(refuseContentEncoding(req(headers))).toBeUndefined();
  });

  it('quotes at most three codings of at most 32 characters each', () => {
    const err = refuseContentEncoding(
      req({ 'content-encoding': `${'a'.repeat(100)}, b, c, d, e`, 'content-length': '1' }),
    );
    expect(err?.message).toContain(`${'a'.repeat(32)}, b, c is not accepted`);
  });
});
