import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { SandboxNetworking } from '@mango/domain-egress';
import { WorkspaceEntity } from './workspace.entity';

@Entity({ name: 'environments' })
@Index('environments_workspace_idx', ['workspaceId', 'id'])
@Index('environments_name_key', ['workspaceId', 'name'], { unique: true, where: 'deleted_at IS NULL' })
export class EnvironmentEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'jsonb' })
  /** `networking`: the sandbox network policy (ADR 0021); absent: no egress. */
  config!: { type: 'self_hosted'; networking?: SandboxNetworking };

  @Column({ type: 'text', nullable: true })
  scope!: 'organization' | 'account' | null;

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  /** Deleted Environments keep a row so that ids are never reused; every read treats them as absent. */
  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true })
  deletedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}
