import { Logger } from '@nestjs/common';
import { conflict, invalidRequest } from '@mango/domain-kernel';
import type { CredentialSecrets } from '@mango/domain-vaults';
import {
  Keyring,
  KeyringError,
  open,
  parseKeyring,
  rewrap,
  seal,
  Sealed,
  vaultCredentialBinding,
} from '@mango/platform-secrets';
import type { DataSource, EntityManager } from 'typeorm';

/** The operator's allowlist of non-public addresses (MANGO_MCP_ALLOWED_ADDRESSES) for MCP and token endpoints. */
export const MCP_ALLOWLIST = Symbol.for('mango.McpAllowlist');

/** The keyring of this process (`keyringFromSettings`: one for every sealed value), or null when none is configured. */
export const VAULT_KEYRING = Symbol.for('mango.VaultKeyring');

/** Parses `MANGO_VAULT_KEYRING` alone (absent or empty → null): `mango vault rotate-key` only; apps use `keyringFromSettings`. */
export function vaultKeyringFrom(raw: string | undefined): Keyring | null {
  if (raw === undefined || raw.trim() === '') return null;
  try {
    return parseKeyring(raw);
  } catch (e) {
    throw new Error(`MANGO_VAULT_KEYRING is invalid: ${(e as Error).message}`);
  }
}

/**
 * `mango vault rotate-key`'s check (Vault credentials only; the apps check every sealed value with
 * `assertKeyringCoversStoredValues`). Boot check of every process that reads or writes Vault credentials: once any sealed credential exists,
 * the process refuses to start without a keyring, and with a keyring that lacks a key some credential is
 * wrapped under (it could not open those secrets). The message names key ids, never key material.
 */
export async function assertKeyringCoversCredentials(ds: DataSource, keyring: Keyring | null): Promise<void> {
  const rows: Array<{ kek_id: string; n: string }> = await ds.query(
    'SELECT kek_id, count(*) AS n FROM vault_credentials WHERE kek_id IS NOT NULL GROUP BY kek_id',
  );
  if (rows.length === 0) return;
  if (!keyring) {
    const n = rows.reduce((s, r) => s + Number(r.n), 0);
    throw new Error(
      `MANGO_VAULT_KEYRING is not set, but ${n} encrypted Vault credential(s) exist: configure the keyring ` +
        `(key ids in use: ${rows.map((r) => r.kek_id).join(', ')})`,
    );
  }
  const missing = rows.filter((r) => !keyring.has(r.kek_id));
  if (missing.length > 0)
    throw new Error(
      `MANGO_VAULT_KEYRING lacks key(s) ${missing.map((r) => `${r.kek_id} (${r.n} credential(s))`).join(', ')}: ` +
        'keep old keys in the keyring until `mango vault rotate-key` has finished',
    );
}

export function requireKeyring(keyring: Keyring | null): Keyring {
  if (!keyring)
    throw invalidRequest(
      'Vault credentials cannot be stored: this server has no keyring (the operator must set MANGO_KEYRING; ' +
        'the older MANGO_VAULT_KEYRING counts too)',
    );
  return keyring;
}

/** Seals a credential's secrets under the active key, bound to the credential's id. */
export function sealSecrets(keyring: Keyring, credentialId: string, secrets: CredentialSecrets): Sealed {
  return seal(keyring, JSON.stringify(secrets), vaultCredentialBinding(credentialId));
}

const log = new Logger('vaults');

/**
 * Opens a credential's secrets (null when it has none). Secrets that do not open — sealed for another
 * credential (a row copied in the database), tampered, or under a key this process lacks — are never used:
 * a 409 naming the credential, and a warning with ids and key ids only.
 */

export function openSecrets(
  keyring: Keyring,
  credentialId: string,
  row: { kekId: string | null; wrappedKey: Buffer | null; secretCiphertext: Buffer | null },
): CredentialSecrets | null {
  if (!row.kekId || !row.wrappedKey || !row.secretCiphertext) return null;
  let text: string;
  try {
    text = open(
      keyring,
      { kekId: row.kekId, wrappedKey: row.wrappedKey, ciphertext: row.secretCiphertext },
      vaultCredentialBinding(credentialId),
    );
  } catch (e) {
    if (!(e instanceof KeyringError)) throw e;
    const message = `the stored secrets of vault credential ${credentialId} cannot be opened (${e.message})`;
    log.warn(`${message}; they are not used`);
    throw conflict(`${message}; archive it and create it again`, { error_code: 'credential_unreadable' });
  }
  return JSON.parse(text) as CredentialSecrets;
}

export interface RotationResult {
  activeKeyId: string;
  rewrapped: number;
  remaining: number;
}

/**
 * Re-wraps every credential's data key under the keyring's active key (`mango vault rotate-key`), in
 * batches of row-locked transactions, so readers keep working throughout: a row is either still under its
 * old key (which stays in the keyring until this returns) or already under the active one.
 */
export async function rotateVaultKeys(
  ds: DataSource,
  keyring: Keyring,
  opts: { batchSize?: number } = {},
): Promise<RotationResult> {
  const batch = opts.batchSize ?? 100;
  let rewrapped = 0;
  for (;;) {
    const n = await ds.transaction(async (tx: EntityManager) => {
      const rows: Array<{ id: string; kek_id: string; wrapped_key: Buffer; secret_ciphertext: Buffer }> =
        await tx.query(
          `SELECT id, kek_id, wrapped_key, secret_ciphertext FROM vault_credentials
            WHERE kek_id IS NOT NULL AND kek_id <> $1 ORDER BY id LIMIT $2 FOR UPDATE`,
          [keyring.activeId, batch],
        );
      for (const r of rows) {
        if (!keyring.has(r.kek_id))
          throw new KeyringError(
            `credential ${r.id} is wrapped under key ${r.kek_id}, which is not in the keyring`,
          );
        const next = rewrap(
          keyring,
          { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.secret_ciphertext },
          vaultCredentialBinding(r.id),
        );
        await tx.query('UPDATE vault_credentials SET kek_id = $2, wrapped_key = $3 WHERE id = $1', [
          r.id,
          next.kekId,
          next.wrappedKey,
        ]);
      }
      return rows.length;
    });
    rewrapped += n;
    if (n < batch) break;
  }
  const [{ remaining }] = (await ds.query(
    'SELECT count(*)::int AS remaining FROM vault_credentials WHERE kek_id IS NOT NULL AND kek_id <> $1',
    [keyring.activeId],
  )) as Array<{ remaining: number }>;
  return { activeKeyId: keyring.activeId, rewrapped, remaining };
}
