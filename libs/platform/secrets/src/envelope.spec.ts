import { randomBytes } from 'node:crypto';
import { generateKeyringEntry, KeyringError, open, parseKeyring, rewrap, seal } from './envelope';

const k = () => randomBytes(32).toString('base64');

describe('envelope encryption', () => {
  const a = `a:${k()}`;
  const b = `b:${k()}`;

  it('seals under the first key and opens again; the plaintext is not in the sealed bytes', () => {
    const ring = parseKeyring(`${a},${b}`);
    const s = seal(ring, 'super-secret-token', 'vcrd_1');
    expect(s.kekId).toBe('a');
    expect(s.wrappedKey.length).toBe(12 + 16 + 32);
    expect(Buffer.concat([s.wrappedKey, s.ciphertext]).toString('latin1')).not.toContain('super-secret');
    expect(open(ring, s, 'vcrd_1')).toBe('super-secret-token');
  });

  it('two seals of the same value differ (fresh data key and IVs)', () => {
    const ring = parseKeyring(a);
    const x = seal(ring, 'v', 'id');
    const y = seal(ring, 'v', 'id');
    expect(x.ciphertext.equals(y.ciphertext)).toBe(false);
    expect(x.wrappedKey.equals(y.wrappedKey)).toBe(false);
  });

  it('refuses other associated data, a tampered byte, and an unknown key', () => {
    const ring = parseKeyring(a);
    const s = seal(ring, 'v', 'vcrd_1');
    expect(() => open(ring, s, 'vcrd_2')).toThrow(KeyringError);
    const t = { ...s, ciphertext: Buffer.from(s.ciphertext) };
    t.ciphertext[t.ciphertext.length - 1]! ^= 1;
    expect(() => open(ring, t, 'vcrd_1')).toThrow('does not authenticate');
    expect(() => open(parseKeyring(b), s, 'vcrd_1')).toThrow('key a is not in the keyring');
  });

  it('rotation: an old key stays readable, rewrap moves the data key to the active key only', () => {
    const old = parseKeyring(a);
    const s = seal(old, 'v', 'id');
    const both = parseKeyring(`${b},${a}`);
    expect(open(both, s, 'id')).toBe('v');
    const r = rewrap(both, s, 'id');
    expect(r.kekId).toBe('b');
    expect(r.ciphertext.equals(s.ciphertext)).toBe(true);
    expect(open(parseKeyring(b), r, 'id')).toBe('v');
    expect(rewrap(both, r, 'id')).toBe(r);
  });

  it.each([
    ['', 'no keys'],
    ['nokey', 'must be id:base64key'],
    [`bad id!:${k()}`, 'the id must be'],
    [`a:${k()},a:${k()}`, 'duplicate key id a'],
    ['a:%%%', 'is not base64'],
    [`a:${randomBytes(16).toString('base64')}`, 'must be 32 bytes (it is 16)'],
  ])('parseKeyring(%p) fails: %s', (raw, message) => {
    expect(() => parseKeyring(raw)).toThrow(message);
  });

  it('never puts key material in an error message', () => {
    const key = randomBytes(16).toString('base64');
    try {
      parseKeyring(`a:${key}`);
      throw new Error('expected a failure');
    } catch (e) {
      expect(String(e)).not.toContain(key);
    }
  });

  it('accepts URL-safe base64 and generates usable entries', () => {
    const urlSafe = `u:${randomBytes(32).toString('base64url')}`;
    expect(parseKeyring(urlSafe).activeId).toBe('u');
    const ring = parseKeyring(generateKeyringEntry('gen-1'));
    expect(open(ring, seal(ring, 'x', 'y'), 'y')).toBe('x');
  });
});
