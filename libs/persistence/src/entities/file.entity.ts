import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/** PostgreSQL `bigint` arrives as a string; File sizes stay far below 2^53, so a number is exact. */
const bigintAsNumber = {
  to: (value: number) => value,
  from: (value: string | number) => Number(value),
};

/**
 * An immutable, Workspace-owned File. The bytes live in the object store under `object_key`; this row
 * exists only once they were completely written (upload and row commit are one recoverable unit, see
 * `object_cleanups`). The Workspace foreign key has no cascade: deleting a Workspace that still has
 * Files fails instead of silently orphaning their objects.
 */
@Entity({ name: 'files' })
@Index('files_workspace_idx', ['workspaceId', 'id'])
@Check('files_size_check', 'size_bytes >= 0')
export class FileEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  filename!: string;

  @Column({ name: 'mime_type', type: 'text' })
  mimeType!: string;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: bigintAsNumber })
  sizeBytes!: number;

  @Index('files_object_key_key', { unique: true })
  @Column({ name: 'object_key', type: 'text' })
  objectKey!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => WorkspaceEntity, { createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}
