import { MAX_BODY_BYTES, MAX_HEADER_LINES, requestFraming } from './request-framing';

const HOST = ['Host', 'mango.sandbox'];

describe('requestFraming (what the Work API socket forwards at all)', () => {
  it.each([
    ['GET', [...HOST], 0],
    ['GET', [...HOST, 'Content-Length', '0'], 0],
    ['DELETE', [...HOST], 0],
    ['POST', [...HOST], 0],
    ['POST', [...HOST, 'Content-Length', '12'], 12],
    ['POST', [...HOST, 'content-length', ` ${MAX_BODY_BYTES} `], MAX_BODY_BYTES],
  ])('%s with %j forwards exactly the declared length', (method, raw, length) =>
    expect(requestFraming(method, '1.1', raw)).toEqual({ ok: true, length }),
  );

  it.each([
    ['any Transfer-Encoding', 'POST', [...HOST, 'Transfer-Encoding', 'chunked']],
    ['Transfer-Encoding: identity', 'POST', [...HOST, 'transfer-encoding', 'identity']],
    ['TE with CL', 'POST', [...HOST, 'Content-Length', '3', 'Transfer-Encoding', 'chunked']],
    ['two Content-Lengths, equal', 'POST', [...HOST, 'Content-Length', '3', 'Content-Length', '3']],
    ['a Content-Length list', 'POST', [...HOST, 'Content-Length', '3, 3']],
    ['a signed Content-Length', 'POST', [...HOST, 'Content-Length', '+3']],
    ['a hex Content-Length', 'POST', [...HOST, 'Content-Length', '0x3']],
    ['an empty Content-Length', 'POST', [...HOST, 'Content-Length', '']],
    ['a folded value', 'POST', [...HOST, 'X-A', 'a\r\n b']],
    ['a body on GET', 'GET', [...HOST, 'Content-Length', '1']],
    ['a body on HEAD', 'HEAD', [...HOST, 'Content-Length', '1']],
    ['a body on DELETE', 'delete', [...HOST, 'Content-Length', '1']],
    ['no Host', 'GET', []],
    ['two Hosts', 'GET', [...HOST, ...HOST]],
    ['an Upgrade', 'GET', [...HOST, 'Upgrade', 'h2c']],
    ['Connection: upgrade', 'GET', [...HOST, 'Connection', 'keep-alive, Upgrade']],
    [
      'too many header lines',
      'GET',
      [...HOST, ...Array.from({ length: MAX_HEADER_LINES }, () => ['X', '1']).flat()],
    ],
  ])('refuses %s with 400', (_what, method, raw) =>
    expect(requestFraming(method, '1.1', raw)).toMatchObject({
      ok: false,
      status: 400,
      type: 'invalid_request_error',
    }),
  );

  it('refuses HTTP/1.0 (other keep-alive and framing rules)', () =>
    expect(requestFraming('GET', '1.0', HOST)).toMatchObject({ ok: false, status: 400 }));

  it('refuses a body over the cap with 413', () =>
    expect(
      requestFraming('POST', '1.1', [...HOST, 'Content-Length', String(MAX_BODY_BYTES + 1)]),
    ).toMatchObject({
      ok: false,
      status: 413,
      type: 'request_too_large',
    }));
});
