import type { CredentialAuth } from '@mango/domain-vaults';
import type { VaultCredentialEntity, VaultEntity } from '@mango/persistence';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function renderVault(v: VaultEntity) {
  return {
    id: v.id,
    type: 'vault' as const,
    display_name: v.displayName,
    metadata: v.metadata,
    created_at: v.createdAt.toISOString(),
    updated_at: v.updatedAt.toISOString(),
    archived_at: iso(v.archivedAt),
  };
}

/**
 * Only the public `auth` (stored apart from the sealed secrets) is ever rendered. `mcp_oauth` credentials
 * also show `refresh_failure` (a Mango addition): the last failed refresh (its kind, a fixed message that
 * never carries a token, and when), or null; a successful refresh or a secret update clears it.
 */
export function renderCredential(c: VaultCredentialEntity) {
  return {
    id: c.id,
    type: 'vault_credential' as const,
    vault_id: c.vaultId,
    display_name: c.displayName,
    metadata: c.metadata,
    auth: c.auth as unknown as CredentialAuth,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    archived_at: iso(c.archivedAt),
    ...(c.kind === 'mcp_oauth' ? { refresh_failure: c.refreshFailure ?? null } : {}),
  };
}

export type VaultView = ReturnType<typeof renderVault>;
export type CredentialView = ReturnType<typeof renderCredential>;
