import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { vaultCredentialBinding, webhookSecretBinding } from './bindings';
import { KeyringError, open, parseKeyring } from './envelope';
import { keyringFromSettings, LEGACY_WEBHOOK_KEY_ID } from './keyring-settings';
import { isCurrent, openStored, resealStored, sealJson } from './stored-sealed';

/** Values sealed by the code before the one keyring (SecretBox and the Vault envelope), kept as a fixture. */
const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/sealed-before-one-keyring.json'), 'utf8'),
) as {
  webhook: {
    webhook_secrets_key_hex: string;
    webhook_secrets_key_base64: string;
    webhook_id: string;
    stored: { sealed: string; expires_at: null };
    plaintext: string;
  };
  vault: {
    vault_keyring: string;
    credential_id: string;
    kek_id: string;
    wrapped_key_base64: string;
    secret_ciphertext_base64: string;
    secrets: Record<string, string>;
  };
};

const k = () => randomBytes(32).toString('base64');

describe('stored sealed values: key ids, bindings, and the values sealed before them', () => {
  it('records the id of the key that sealed it, and opens only for the record it was sealed for', () => {
    const ring = parseKeyring(`a:${k()},b:${k()}`);
    const s = sealJson(ring, 'whsec_x', webhookSecretBinding('webhook_1'));
    expect(s.kek_id).toBe('a');
    expect(JSON.stringify(s)).not.toContain('whsec_x');
    expect(openStored(ring, s, webhookSecretBinding('webhook_1'), LEGACY_WEBHOOK_KEY_ID)).toBe('whsec_x');
    expect(() => openStored(ring, s, webhookSecretBinding('webhook_2'), LEGACY_WEBHOOK_KEY_ID)).toThrow(
      KeyringError,
    );
    expect(() => openStored(ring, s, vaultCredentialBinding('webhook_1'), LEGACY_WEBHOOK_KEY_ID)).toThrow(
      'does not authenticate',
    );
  });

  it('a webhook secret sealed by the old SecretBox (fixture) opens with MANGO_WEBHOOK_SECRETS_KEY, hex or base64', () => {
    const w = fixture.webhook;
    for (const key of [w.webhook_secrets_key_hex, w.webhook_secrets_key_base64]) {
      const ring = keyringFromSettings({ MANGO_KEYRING: `new:${k()}`, MANGO_WEBHOOK_SECRETS_KEY: key })!;
      expect(openStored(ring, w.stored, webhookSecretBinding(w.webhook_id), LEGACY_WEBHOOK_KEY_ID)).toBe(
        w.plaintext,
      );
    }
    // Without that key: a clear error naming the key id it needs.
    expect(() =>
      openStored(
        parseKeyring(`new:${k()}`),
        w.stored,
        webhookSecretBinding(w.webhook_id),
        LEGACY_WEBHOOK_KEY_ID,
      ),
    ).toThrow('key webhook-legacy is not in the keyring');
  });

  it('a Vault credential sealed by the old code (fixture) opens with MANGO_VAULT_KEYRING and with the same key in MANGO_KEYRING', () => {
    const v = fixture.vault;
    const sealed = {
      kekId: v.kek_id,
      wrappedKey: Buffer.from(v.wrapped_key_base64, 'base64'),
      ciphertext: Buffer.from(v.secret_ciphertext_base64, 'base64'),
    };
    for (const settings of [
      { MANGO_VAULT_KEYRING: v.vault_keyring },
      { MANGO_KEYRING: `b:${k()},${v.vault_keyring}` },
    ]) {
      const ring = keyringFromSettings(settings)!;
      expect(JSON.parse(open(ring, sealed, vaultCredentialBinding(v.credential_id)))).toEqual(v.secrets);
    }
  });

  it('reseal: an unbound value is sealed afresh under the active key and bound; a bound one gets its data key re-wrapped', () => {
    const w = fixture.webhook;
    const binding = webhookSecretBinding(w.webhook_id);
    const ring = keyringFromSettings({
      MANGO_KEYRING: `b:${k()}`,
      MANGO_WEBHOOK_SECRETS_KEY: w.webhook_secrets_key_hex,
    })!;
    expect(isCurrent(ring, w.stored)).toBe(false);
    const bound = resealStored(ring, w.stored, binding, LEGACY_WEBHOOK_KEY_ID);
    expect(bound.kek_id).toBe('b');
    expect(isCurrent(ring, bound)).toBe(true);
    expect(resealStored(ring, bound, binding, LEGACY_WEBHOOK_KEY_ID)).toBe(bound);
    // Only the active key is needed now.
    const onlyB = parseKeyring(`b:${ring.key('b').toString('base64')}`);
    expect(openStored(onlyB, bound, binding, LEGACY_WEBHOOK_KEY_ID)).toBe(w.plaintext);
    // Rotating again to c keeps the ciphertext and re-wraps the data key.
    const c = parseKeyring(`c:${k()},b:${ring.key('b').toString('base64')}`);
    const again = resealStored(c, bound, binding, LEGACY_WEBHOOK_KEY_ID);
    expect({ kek: again.kek_id, sameCiphertext: again.ciphertext === bound.ciphertext }).toEqual({
      kek: 'c',
      sameCiphertext: true,
    });
    expect(openStored(c, again, binding, LEGACY_WEBHOOK_KEY_ID)).toBe(w.plaintext);
    // A value copied from another record cannot be resealed either (it does not open).
    expect(() =>
      resealStored(c, bound, webhookSecretBinding('webhook_other'), LEGACY_WEBHOOK_KEY_ID),
    ).toThrow(KeyringError);
  });
});
