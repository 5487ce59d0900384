import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { VaultEntity } from './vault.entity';

/**
 * A Vault credential (openapi.yaml `Vault`, `VaultCredential`). `auth` is the public part only (what responses show); the secrets
 * are one JSON document sealed with envelope encryption (`@mango/platform-secrets`): `secret_ciphertext`
 * under a per-credential data key, the data key wrapped under keyring key `kek_id`. Archiving purges the
 * three sealed columns. `url_key` is the normalised `mcp_server_url` (unique among active credentials of
 * a Vault).
 */
@Entity({ name: 'vault_credentials' })
@Index('vault_credentials_vault_idx', ['vaultId', 'id'])
@Index('vault_credentials_active_url_key', ['vaultId', 'urlKey'], {
  unique: true,
  where: 'archived_at IS NULL',
})
@Index('vault_credentials_kek_idx', ['kekId'])
@Check('vault_credentials_kind_check', "kind IN ('static_bearer', 'mcp_oauth')")
@Check(
  'vault_credentials_sealed_check',
  '(kek_id IS NULL) = (wrapped_key IS NULL) AND (kek_id IS NULL) = (secret_ciphertext IS NULL)',
)
export class VaultCredentialEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'vault_id', type: 'text' })
  vaultId!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  kind!: 'static_bearer' | 'mcp_oauth';

  @Column({ name: 'display_name', type: 'text', nullable: true })
  displayName!: string | null;

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Column({ name: 'url_key', type: 'text' })
  urlKey!: string;

  /** The public `auth` object (never a secret). */
  @Column({ type: 'jsonb' })
  auth!: Record<string, unknown>;

  @Column({ name: 'kek_id', type: 'text', nullable: true })
  kekId!: string | null;

  @Column({ name: 'wrapped_key', type: 'bytea', nullable: true })
  wrappedKey!: Buffer | null;

  @Column({ name: 'secret_ciphertext', type: 'bytea', nullable: true })
  secretCiphertext!: Buffer | null;

  /** The last OAuth refresh failure ({type, message, at}); cleared by a successful refresh or update. */
  @Column({ name: 'refresh_failure', type: 'jsonb', nullable: true })
  refreshFailure!: { type: string; message: string; at: string } | null;

  /**
   * Bumped by every change of `auth` or the sealed secrets and by every refresh outcome: a refresh claims
   * the credential only at the version it decided on (VaultCredentialRepository.claimRefresh).
   */
  @Column({ type: 'integer', default: 0 })
  version!: number;

  /**
   * The OAuth refresh in flight (a random claim id), held without a row lock or a connection while the
   * token endpoint is called, until `refresh_claim_expires_at` (docs/api-guide.md, Vaults: OAuth refresh).
   */
  @Column({ name: 'refresh_claim', type: 'text', nullable: true })
  refreshClaim!: string | null;

  @Column({ name: 'refresh_claim_expires_at', type: 'timestamptz', precision: 3, nullable: true })
  refreshClaimExpiresAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @ManyToOne(() => VaultEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'vault_id' })
  vault?: VaultEntity;
}
