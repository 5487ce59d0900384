import { DomainError } from '@mango/domain-kernel';
import { contentDisposition, fileObjectKey, parseFilename, parseMimeType } from './file-input';

describe('parseFilename', () => {
  it('keeps any printable name up to 255 characters, unicode included', () => {
    expect(parseFilename('report (final) — ✓.pdf')).toBe('report (final) — ✓.pdf');
    expect(parseFilename('x'.repeat(255))).toHaveLength(255);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['256 characters', 'x'.repeat(256)],
    ['a newline', 'a\nb.txt'],
    ['a NUL', 'a\u0000b'],
    ['a C1 control', 'a\u0085b'],
  ])('rejects a %s filename with a 400', (_label, raw) => {
    expect(() => parseFilename(raw)).toThrow(DomainError);
  });
});

describe('parseMimeType', () => {
  it('accepts type/subtype tokens and lower-cases them', () => {
    expect(parseMimeType('Application/VND.Foo+JSON')).toBe('application/vnd.foo+json');
  });
  it.each(['text', 'text/', '/plain', 'text/plain; charset=utf-8', 'te xt/plain'])('rejects %j', (raw) => {
    expect(() => parseMimeType(raw)).toThrow(/Content-Type/);
  });
});

describe('contentDisposition', () => {
  it('is an attachment with an ASCII fallback and the exact UTF-8 name', () => {
    expect(contentDisposition('plain.txt')).toBe(
      `attachment; filename="plain.txt"; filename*=UTF-8''plain.txt`,
    );
    expect(contentDisposition('a "quoted"\\ naïve (1).txt')).toBe(
      `attachment; filename="a _quoted__ na_ve (1).txt"; filename*=UTF-8''a%20%22quoted%22%5C%20na%C3%AFve%20%281%29.txt`,
    );
  });

  it('round-trips through RFC 8187 decoding', () => {
    const name = "résumé 'v2' ✓.pdf";
    const encoded = /filename\*=UTF-8''(.+)$/.exec(contentDisposition(name))![1]!;
    expect(decodeURIComponent(encoded)).toBe(name);
  });
});

describe('fileObjectKey', () => {
  it('puts every File under its Workspace prefix', () => {
    expect(fileObjectKey('wrkspc_default', 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB')).toBe(
      'workspaces/wrkspc_default/files/file_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    );
  });
});
