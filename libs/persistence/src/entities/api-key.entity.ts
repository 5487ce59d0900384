import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EnvironmentEntity } from './environment.entity';
import { WorkspaceEntity } from './workspace.entity';

/**
 * Workspace API keys (environment_id null) and Environment-scoped supervisor keys. Only the SHA-256
 * digest of the key is stored; the key itself is shown once at creation.
 */
@Entity({ name: 'api_keys' })
@Index('api_keys_workspace_idx', ['workspaceId', 'id'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'environment_id', type: 'text', nullable: true })
  environmentId!: string | null;

  @Column({ type: 'text' })
  label!: string;

  @Index('api_keys_digest_key', { unique: true })
  @Column({ type: 'bytea' })
  digest!: Buffer;

  /** The first characters of the key, so an operator can tell keys apart in `api-key list`. */
  @Column({ name: 'key_hint', type: 'text' })
  keyHint!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;

  @ManyToOne(() => EnvironmentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id' })
  environment?: EnvironmentEntity;
}
