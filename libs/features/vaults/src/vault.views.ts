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

/** Only the public `auth` (stored apart from the sealed secrets) is ever rendered. */
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
  };
}

export type VaultView = ReturnType<typeof renderVault>;
export type CredentialView = ReturnType<typeof renderCredential>;
