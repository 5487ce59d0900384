import { createHash } from 'node:crypto';
import {
  credentialDigestKey,
  credentialHint,
  credentialKindOf,
  digestCredential,
  generateCredential,
} from './credential';

describe('credentials', () => {
  it.each(['workspaceKey', 'environmentKey', 'workToken'] as const)(
    '%s round-trips its kind and is unpredictable',
    (kind) => {
      const a = generateCredential(kind);
      const b = generateCredential(kind);
      expect(a).not.toBe(b);
      expect(credentialKindOf(a)).toBe(kind);
    },
  );

  it('stores a 32-byte SHA-256 digest, never the key', () => {
    const key = generateCredential('workspaceKey');
    const digest = digestCredential(key);
    expect(digest).toHaveLength(32);
    expect(digest.toString('utf8')).not.toContain(key);
  });

  it('the digest is SHA-256 of the UTF-8 key (what api_keys.digest stores) and the cache key is its base64', () => {
    const key = generateCredential('environmentKey');
    const sha = createHash('sha256').update(key, 'utf8').digest();
    expect(digestCredential(key).equals(sha)).toBe(true);
    expect(credentialDigestKey(key)).toBe(sha.toString('base64'));
    expect(digestCredential('ünïcode').equals(createHash('sha256').update('ünïcode', 'utf8').digest())).toBe(
      true,
    );
  });

  it('rejects unknown formats', () => {
    expect(credentialKindOf('sk-ant-api-xyz')).toBeUndefined();
    expect(credentialKindOf(`${generateCredential('workspaceKey')}x`)).toBeUndefined();
  });

  it('hints reveal only the prefix and four characters', () => {
    const key = generateCredential('environmentKey');
    expect(credentialHint(key)).toBe(`${key.slice(0, 13)}…`);
  });
});
