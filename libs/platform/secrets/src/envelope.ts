import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Envelope encryption for secrets at rest (Vault credentials, webhook signing secrets), with node:crypto only.
 *
 * Each sealed value has its own random 256-bit data key. The value is encrypted with AES-256-GCM under
 * the data key; the data key is encrypted (wrapped) with AES-256-GCM under a key-encryption key (KEK)
 * from the keyring. Both use a fresh 96-bit IV and bind the caller's associated data (e.g. the
 * credential id) so that a sealed value copied to another row does not open. Rotation re-wraps only the
 * data key, never touching the ciphertext.
 *
 * Keyring (configuration `MANGO_KEYRING`, see keyring-settings.ts): comma-separated `id:base64key` entries;
 * each key is exactly 32 bytes (standard or URL-safe base64); ids are 1–64 of `[A-Za-z0-9_.-]`. The
 * **first** entry is the active key for new seals and rotation; the others stay readable (a value sealed
 * under any of them still opens) until `mango keyring rotate` has re-sealed everything under the active key.
 */
export interface Keyring {
  readonly activeId: string;
  has(id: string): boolean;
  ids(): string[];
  /** Internal: the raw key for an id. */
  key(id: string): Buffer;
}

export interface Sealed {
  kekId: string;
  /** iv(12) ‖ tag(16) ‖ wrapped data key(32) */
  wrappedKey: Buffer;
  /** iv(12) ‖ tag(16) ‖ ciphertext */
  ciphertext: Buffer;
}

export class KeyringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyringError';
  }
}

const KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** One `id:base64key` entry per element; the error message never contains key material. */
export function parseKeyringEntries(entries: readonly string[]): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const sep = entry.indexOf(':');
    if (sep <= 0) throw new KeyringError(`keyring entry ${i + 1} must be id:base64key`);
    const id = entry.slice(0, sep);
    if (!KEY_ID.test(id))
      throw new KeyringError(`keyring entry ${i + 1}: the id must be 1-64 of [A-Za-z0-9_.-]`);
    if (seen.has(id)) throw new KeyringError(`keyring entry ${i + 1}: duplicate key id ${id}`);
    const b64 = entry.slice(sep + 1);
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64)) throw new KeyringError(`keyring key ${id} is not base64`);
    const key = Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length !== 32) throw new KeyringError(`keyring key ${id} must be 32 bytes (it is ${key.length})`);
    seen.add(id);
    out.push([id, key]);
  }
  return out;
}

/** A keyring of these keys; the first is the active one. */
export function keyringOf(entries: ReadonlyArray<readonly [string, Buffer]>): Keyring {
  if (entries.length === 0) throw new KeyringError('the keyring has no keys');
  const keys = new Map<string, Buffer>(entries.map(([id, key]) => [id, key]));
  return {
    activeId: entries[0]![0],
    has: (id) => keys.has(id),
    ids: () => [...keys.keys()],
    key: (id) => {
      const k = keys.get(id);
      if (!k) throw new KeyringError(`key ${id} is not in the keyring`);
      return k;
    },
  };
}

/** Parses a keyring (comma-separated `id:base64key`); the error message never contains key material. */
export function parseKeyring(raw: string): Keyring {
  return keyringOf(
    parseKeyringEntries(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  );
}

/** A fresh random key entry for a keyring (`id:base64`). */
export function generateKeyringEntry(id: string): string {
  if (!KEY_ID.test(id)) throw new KeyringError('the id must be 1-64 of [A-Za-z0-9_.-]');
  return `${id}:${randomBytes(32).toString('base64')}`;
}

function encrypt(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(aad);
  const body = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), body]);
}

function decrypt(key: Buffer, blob: Buffer, aad: Buffer): Buffer {
  if (blob.length < 28) throw new KeyringError('sealed value is truncated');
  const d = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(blob.subarray(12, 28));
  try {
    return Buffer.concat([d.update(blob.subarray(28)), d.final()]);
  } catch {
    throw new KeyringError('sealed value does not authenticate (wrong key or tampered data)');
  }
}

const wrapAad = (kekId: string, aad: string) => Buffer.from(`mango-dek\0${kekId}\0${aad}`);
const dataAad = (aad: string) => Buffer.from(`mango-data\0${aad}`);

export function seal(keyring: Keyring, plaintext: string, aad: string): Sealed {
  const dek = randomBytes(32);
  try {
    const kekId = keyring.activeId;
    return {
      kekId,
      wrappedKey: encrypt(keyring.key(kekId), dek, wrapAad(kekId, aad)),
      ciphertext: encrypt(dek, Buffer.from(plaintext, 'utf8'), dataAad(aad)),
    };
  } finally {
    dek.fill(0);
  }
}

export function open(keyring: Keyring, sealed: Sealed, aad: string): string {
  const dek = decrypt(keyring.key(sealed.kekId), sealed.wrappedKey, wrapAad(sealed.kekId, aad));
  try {
    return decrypt(dek, sealed.ciphertext, dataAad(aad)).toString('utf8');
  } finally {
    dek.fill(0);
  }
}

/**
 * Opens a value sealed before key ids and bindings existed: AES-256-GCM `iv(12) ‖ tag(16) ‖ ciphertext`
 * under one keyring key, with no associated data (webhook signing secrets sealed with
 * `MANGO_WEBHOOK_SECRETS_KEY`). Read-only: nothing is sealed this way any more.
 */
export function openUnbound(keyring: Keyring, keyId: string, blob: Buffer): string {
  return decrypt(keyring.key(keyId), blob, Buffer.alloc(0)).toString('utf8');
}

/** Re-wraps the data key under the active key; the ciphertext is unchanged. */
export function rewrap(keyring: Keyring, sealed: Sealed, aad: string): Sealed {
  if (sealed.kekId === keyring.activeId) return sealed;
  const dek = decrypt(keyring.key(sealed.kekId), sealed.wrappedKey, wrapAad(sealed.kekId, aad));
  try {
    const kekId = keyring.activeId;
    return {
      kekId,
      wrappedKey: encrypt(keyring.key(kekId), dek, wrapAad(kekId, aad)),
      ciphertext: sealed.ciphertext,
    };
  } finally {
    dek.fill(0);
  }
}
