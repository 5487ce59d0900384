import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/** An Agent's identity and lifecycle; its definition lives in immutable agent_versions rows. */
@Entity({ name: 'agents' })
@Index('agents_workspace_idx', ['workspaceId', 'id'])
export class AgentEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'current_version', type: 'integer' })
  currentVersion!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}
