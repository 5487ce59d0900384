import { Keyring, KeyringError } from './envelope';

/** How many stored values of one kind need one key (`mango keyring status`, the boot check). */
export interface KeyUsage {
  /** `vault_credentials` or `webhook_secrets`. */
  store: string;
  keyId: string;
  count: number;
  /** False for values sealed before key ids and bindings (webhook secrets sealed with the older key). */
  bound: boolean;
}

const STORE_NOUN: Record<string, string> = {
  vault_credentials: 'Vault credential(s)',
  webhook_secrets: 'webhook signing secret(s)',
};

const describe = (u: KeyUsage) => `${u.count} ${STORE_NOUN[u.store] ?? u.store}`;

/** The usage rows whose key the keyring lacks (all of them without a keyring). */
export function missingKeys(usage: readonly KeyUsage[], keyring: Keyring | null): KeyUsage[] {
  return usage.filter((u) => u.count > 0 && !keyring?.has(u.keyId));
}

/**
 * Boot check of every process that opens sealed values: it refuses to start when stored values need a key
 * the keyring lacks (it could not open them). The message names key ids and counts, never key material.
 */
export function assertKeyringCovers(usage: readonly KeyUsage[], keyring: Keyring | null): void {
  const missing = missingKeys(usage, keyring);
  if (missing.length === 0) return;
  const byKey = [...new Set(missing.map((u) => u.keyId))].map(
    (id) =>
      `${id} (${missing
        .filter((u) => u.keyId === id)
        .map(describe)
        .join(', ')})`,
  );
  if (!keyring)
    throw new KeyringError(
      `no keyring is configured (MANGO_KEYRING or MANGO_KEYRING_FILE; or the older MANGO_VAULT_KEYRING / ` +
        `MANGO_WEBHOOK_SECRETS_KEY), but stored values are sealed under key(s) ${byKey.join(', ')}`,
    );
  throw new KeyringError(
    `the keyring lacks key(s) ${byKey.join(', ')}: keep old keys in the keyring until ` +
      '`mango keyring rotate` reports 0 remaining',
  );
}
