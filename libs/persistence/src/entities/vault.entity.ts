import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/** A Workspace-owned Vault (openapi.yaml `Vault`, `VaultCredential`). Its credentials cascade with it. */
@Entity({ name: 'vaults' })
@Index('vaults_workspace_idx', ['workspaceId', 'id'])
export class VaultEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'display_name', type: 'text' })
  displayName!: string;

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}
