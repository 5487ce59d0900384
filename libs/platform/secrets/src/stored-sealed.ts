import { Keyring, KeyringError, open, openUnbound, rewrap, seal } from './envelope';

/**
 * A sealed value kept in JSON (e.g. one webhook signing secret in `webhooks.secrets`): the envelope of
 * envelope.ts with its key id, the wrapped data key and the ciphertext as base64.
 */
export interface SealedJson {
  kek_id: string;
  wrapped_key: string;
  ciphertext: string;
}

/** The form before key ids: base64url(iv ‖ tag ‖ ciphertext) under one key, bound to nothing. */
export interface UnboundSealed {
  sealed: string;
}

export type StoredSealed = SealedJson | UnboundSealed;

export const isUnbound = (s: StoredSealed): s is UnboundSealed =>
  typeof (s as SealedJson).kek_id !== 'string';

/** The key id a stored value needs (`legacyKeyId` for the unbound form). */
export const keyIdOf = (s: StoredSealed, legacyKeyId: string): string =>
  isUnbound(s) ? legacyKeyId : s.kek_id;

export function sealJson(keyring: Keyring, plaintext: string, binding: string): SealedJson {
  const s = seal(keyring, plaintext, binding);
  return {
    kek_id: s.kekId,
    wrapped_key: s.wrappedKey.toString('base64'),
    ciphertext: s.ciphertext.toString('base64'),
  };
}

const fromJson = (s: SealedJson) => ({
  kekId: s.kek_id,
  wrappedKey: Buffer.from(s.wrapped_key, 'base64'),
  ciphertext: Buffer.from(s.ciphertext, 'base64'),
});

/**
 * Opens a stored value sealed for `binding`; the unbound form opens with key `legacyKeyId`. Throws
 * KeyringError (key ids only in the message) when the key is missing or the value does not authenticate
 * — which is what a value copied from another record does.
 */
export function openStored(
  keyring: Keyring,
  stored: StoredSealed,
  binding: string,
  legacyKeyId: string,
): string {
  if (isUnbound(stored)) {
    if (typeof stored.sealed !== 'string') throw new KeyringError('the sealed value is malformed');
    return openUnbound(keyring, legacyKeyId, Buffer.from(stored.sealed, 'base64url'));
  }
  return open(keyring, fromJson(stored), binding);
}

/** True when the value is sealed under the active key and bound (nothing for rotation to do). */
export const isCurrent = (keyring: Keyring, stored: StoredSealed): boolean =>
  !isUnbound(stored) && stored.kek_id === keyring.activeId;

/**
 * The value under the active key and bound to `binding`: a bound value gets its data key re-wrapped (the
 * ciphertext is kept); an unbound one is opened and sealed afresh. A current value is returned as is.
 */
export function resealStored(
  keyring: Keyring,
  stored: StoredSealed,
  binding: string,
  legacyKeyId: string,
): SealedJson {
  if (isCurrent(keyring, stored)) return stored as SealedJson;
  if (isUnbound(stored)) return sealJson(keyring, openStored(keyring, stored, binding, legacyKeyId), binding);
  const next = rewrap(keyring, fromJson(stored), binding);
  return {
    kek_id: next.kekId,
    wrapped_key: next.wrappedKey.toString('base64'),
    ciphertext: stored.ciphertext,
  };
}
