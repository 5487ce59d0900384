import { Readable } from 'node:stream';
import { decryptStream, encryptStream, identitiesFromFile, newIdentity } from './encryption';

const text = async (r: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
};

describe('age encryption of a backup stream', () => {
  it('round-trips through an X25519 recipient and its identity, and no other identity opens it', async () => {
    const a = await newIdentity();
    const b = await newIdentity();
    const plain = Buffer.alloc(200_000, 7);
    const sealed = await text(await encryptStream(Readable.from([plain]), { recipients: [a.recipient] }));
    expect(sealed.includes(plain.subarray(0, 64))).toBe(false);
    const opened = await text(
      await decryptStream(Readable.from([sealed]), { identities: [a.identity], passphrases: [] }),
    );
    expect(opened.equals(plain)).toBe(true);
    await expect(
      decryptStream(Readable.from([sealed]), { identities: [b.identity], passphrases: [] }),
    ).rejects.toThrow(/does not open with the given identity or passphrase/);
  });

  it('refuses a short passphrase and a malformed recipient before reading anything', async () => {
    await expect(encryptStream(Readable.from([Buffer.from('x')]), { passphrase: 'short' })).rejects.toThrow(
      /at least 12/,
    );
    await expect(
      encryptStream(Readable.from([Buffer.from('x')]), { recipients: ['age1nope'] }),
    ).rejects.toThrow(/--recipient/);
  });

  it('reads identity files: comments and blank lines skipped, anything else refused without echoing it', async () => {
    const { identity } = await newIdentity();
    expect(identitiesFromFile(`# created\n# public key: age1…\n\n${identity}\n`)).toEqual([identity]);
    expect(() => identitiesFromFile('AGE-SECRET-KEY-1NOTAKEY\n')).toThrow(
      /line 1 of the identity file is not/,
    );
    expect(() => identitiesFromFile('AGE-SECRET-KEY-1NOTAKEY\n')).not.toThrow(/NOTAKEY/);
    expect(() => identitiesFromFile('# nothing\n')).toThrow(/holds no identity/);
  });
});
