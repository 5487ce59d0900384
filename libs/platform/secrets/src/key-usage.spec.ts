import { randomBytes } from 'node:crypto';
import { parseKeyring } from './envelope';
import { assertKeyringCovers, KeyUsage, missingKeys } from './key-usage';

describe('assertKeyringCovers: a process refuses to start when stored values need a key it lacks', () => {
  const usage: KeyUsage[] = [
    { store: 'vault_credentials', keyId: 'kA', count: 3, bound: true },
    { store: 'webhook_secrets', keyId: 'kA', count: 2, bound: true },
    { store: 'webhook_secrets', keyId: 'webhook-legacy', count: 1, bound: false },
  ];
  const key = randomBytes(32).toString('base64');

  it('passes when every key in use is in the keyring, and with nothing stored', () => {
    expect(() =>
      assertKeyringCovers(usage, parseKeyring(`kB:${key},kA:${key},webhook-legacy:${key}`)),
    ).not.toThrow();
    expect(() => assertKeyringCovers([], null)).not.toThrow();
  });

  it('names each missing key with what it still seals, never key material', () => {
    const ring = parseKeyring(`kB:${key}`);
    expect(missingKeys(usage, ring).map((u) => u.keyId)).toEqual(['kA', 'kA', 'webhook-legacy']);
    expect(() => assertKeyringCovers(usage, ring)).toThrow(
      'the keyring lacks key(s) kA (3 Vault credential(s), 2 webhook signing secret(s)), ' +
        'webhook-legacy (1 webhook signing secret(s)): keep old keys in the keyring until `mango keyring rotate` reports 0 remaining',
    );
    expect(() => assertKeyringCovers(usage, null)).toThrow(
      /^no keyring is configured .* sealed under key\(s\) kA/,
    );
  });
});
