import { REDACTED, redactSecrets, SHOWN_BODY_MAX, shownBody } from './bounded-reply';

/** Every substring of `secret` of `len` characters. */
const fragments = (secret: string, len: number) =>
  Array.from({ length: secret.length - len + 1 }, (_, i) => secret.slice(i, i + len));

describe('reply redaction runs before the cut', () => {
  const token = `rt-${'7f3a9c1e5b'.repeat(6)}`; // 63 characters

  it.each([
    ['a JSON token field', (t: string) => `{"refresh_token":"${t}","token_type":"Bearer"}`, []],
    ['a form-encoded token field', (t: string) => `access_token=${t}&scope=tools`, []],
    [
      'a known secret in free text',
      (t: string) => `{"error":"invalid_grant","detail":"token ${t} is spent"}`,
      [token],
    ],
  ])(
    '%s straddling the 4,096-character cut leaves no fragment of 8 or more characters',
    (_n, render, known) => {
      for (const offset of [1, 8, 30, token.length - 1]) {
        const head = render(token).indexOf(token);
        // Pad so that the token starts `offset` characters before the cut.
        const text = 'x'.repeat(SHOWN_BODY_MAX - offset - head) + render(token) + 'y'.repeat(100);
        expect(text.indexOf(token)).toBe(SHOWN_BODY_MAX - offset);
        const shown = shownBody(text, known);
        expect(shown.body.length).toBeLessThanOrEqual(SHOWN_BODY_MAX);
        for (const f of fragments(token, 8)) expect(shown.body).not.toContain(f);
      }
    },
  );

  it('a token field cut off by the end of what was read is redacted to the end', () => {
    expect(redactSecrets('{"access_token":"abcdefghijklmnop', [])).toBe(`{"access_token":"${REDACTED}"`);
    expect(redactSecrets('{"access_token":"abc\\"defghijk', [])).toBe(`{"access_token":"${REDACTED}"`);
  });

  it('redacts known secrets as written, JSON-escaped and URL-encoded; the rest of the text stays', () => {
    const secret = 'cs/with"quote&amp';
    const text = `raw ${secret} json ${JSON.stringify(secret)} url ${encodeURIComponent(secret)} end`;
    const out = redactSecrets(text, [secret, undefined, null, '']);
    expect(out).toBe(`raw ${REDACTED} json "${REDACTED}" url ${REDACTED} end`);
  });

  it('a short body is shown whole and not marked truncated; a long one is cut and marked', () => {
    expect(shownBody('{"error":"invalid_grant"}', [])).toEqual({
      body: '{"error":"invalid_grant"}',
      body_truncated: false,
    });
    const long = shownBody('z'.repeat(SHOWN_BODY_MAX + 1), []);
    expect(long).toEqual({ body: 'z'.repeat(SHOWN_BODY_MAX), body_truncated: true });
  });

  it('never cuts inside a surrogate pair', () => {
    const text = 'a'.repeat(SHOWN_BODY_MAX - 1) + '😀' + 'b';
    const { body } = shownBody(text, []);
    expect(body).toBe('a'.repeat(SHOWN_BODY_MAX - 1));
  });
});
