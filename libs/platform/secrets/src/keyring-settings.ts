import { readFileSync } from 'node:fs';
import { Keyring, KeyringError, keyringOf, parseKeyringEntries } from './envelope';

/**
 * The fixed id the older `MANGO_WEBHOOK_SECRETS_KEY` gets in the keyring. Webhook signing secrets sealed
 * before key ids existed (no `kek_id` in their JSON) open with the key of this id.
 */
export const LEGACY_WEBHOOK_KEY_ID = 'webhook-legacy';

/** The settings the one keyring is built from (each app's env DTO carries them; docs/operator-guide.md). */
export interface KeyringSettings {
  /** Comma-separated `id:base64key` entries, the first is active. */
  MANGO_KEYRING?: string;
  /** A file with the same entries, separated by commas or newlines; `#` starts a comment line. */
  MANGO_KEYRING_FILE?: string;
  /** Older: the Vault keyring (same format). Its keys join the keyring after MANGO_KEYRING's. */
  MANGO_VAULT_KEYRING?: string;
  /** Older: the webhook secrets key (64 hex characters or base64 of 32 bytes), id `webhook-legacy`. */
  MANGO_WEBHOOK_SECRETS_KEY?: string;
}

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/** Entries of a keyring file: commas or newlines separate them; blank lines and `#` lines are ignored. */
export function keyringFileEntries(text: string): string[] {
  return text
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith('#'))
    .flatMap((line) => line.split(','))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The older `MANGO_WEBHOOK_SECRETS_KEY`: 64 hex characters or base64(url) of exactly 32 bytes. */
export function parseLegacyWebhookKey(raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32)
    throw new KeyringError('MANGO_WEBHOOK_SECRETS_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

const split = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

function named<T>(variable: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new KeyringError(`${variable} is invalid: ${(e as Error).message}`);
  }
}

/**
 * The one keyring of a process (Vault credentials, webhook signing secrets), or null when no setting names
 * a key. Keys come, in this order, from `MANGO_KEYRING` or `MANGO_KEYRING_FILE` (not both), the older
 * `MANGO_VAULT_KEYRING`, and the older `MANGO_WEBHOOK_SECRETS_KEY` (id `webhook-legacy`); the first key is
 * the active one. One id named twice must name the same key. Errors name the variable and key ids, never
 * key material.
 */
export function keyringFromSettings(
  s: KeyringSettings,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Keyring | null {
  if (set(s.MANGO_KEYRING) && set(s.MANGO_KEYRING_FILE))
    throw new KeyringError('set MANGO_KEYRING or MANGO_KEYRING_FILE, not both');
  const sources: Array<[string, Array<[string, Buffer]>]> = [];
  if (set(s.MANGO_KEYRING))
    sources.push([
      'MANGO_KEYRING',
      named('MANGO_KEYRING', () => parseKeyringEntries(split(s.MANGO_KEYRING!))),
    ]);
  if (set(s.MANGO_KEYRING_FILE)) {
    const path = s.MANGO_KEYRING_FILE.trim();
    let text: string;
    try {
      text = readFile(path);
    } catch (e) {
      throw new KeyringError(
        `MANGO_KEYRING_FILE ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    const entries = named('MANGO_KEYRING_FILE', () => parseKeyringEntries(keyringFileEntries(text)));
    if (entries.length === 0) throw new KeyringError(`MANGO_KEYRING_FILE ${path} has no keys`);
    sources.push(['MANGO_KEYRING_FILE', entries]);
  }
  if (set(s.MANGO_VAULT_KEYRING))
    sources.push([
      'MANGO_VAULT_KEYRING',
      named('MANGO_VAULT_KEYRING', () => parseKeyringEntries(split(s.MANGO_VAULT_KEYRING!))),
    ]);
  if (set(s.MANGO_WEBHOOK_SECRETS_KEY))
    sources.push([
      'MANGO_WEBHOOK_SECRETS_KEY',
      [[LEGACY_WEBHOOK_KEY_ID, parseLegacyWebhookKey(s.MANGO_WEBHOOK_SECRETS_KEY)]],
    ]);
  const merged: Array<[string, Buffer]> = [];
  const from = new Map<string, string>();
  for (const [variable, entries] of sources)
    for (const [id, key] of entries) {
      const prior = merged.find(([known]) => known === id);
      if (!prior) {
        merged.push([id, key]);
        from.set(id, variable);
      } else if (!prior[1].equals(key))
        throw new KeyringError(`key id ${id} names different keys in ${from.get(id)} and ${variable}`);
    }
  return merged.length ? keyringOf(merged) : null;
}
