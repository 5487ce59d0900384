import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/**
 * A Workspace-owned Memory Store (openapi.yaml `MemoryStore`). Its Memories and their versions cascade with it; their
 * content objects are removed through `object_cleanups` intents written in the deleting transaction.
 * The Workspace foreign key does not cascade (objects must be cleaned up first, as for Files).
 */
@Entity({ name: 'memory_stores' })
@Index('memory_stores_workspace_idx', ['workspaceId', 'id'])
export class MemoryStoreEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  name!: string;

  /** "" when unset (the hosted shape always has a string). */
  @Column({ type: 'text', default: '' })
  description!: string;

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
