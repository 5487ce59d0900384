import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/**
 * A Workspace-owned custom Skill. Its bundles are immutable `skill_versions`; `next_version` hands out
 * version numbers (never reused, even after a version is deleted) under the row lock, and
 * `latest_version` is the highest version that still exists (null when none does). The Workspace
 * foreign key does not cascade: the versions' objects must be cleaned up first.
 */
@Entity({ name: 'skills' })
@Index('skills_workspace_idx', ['workspaceId', 'id'])
export class SkillEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'display_title', type: 'text', nullable: true })
  displayTitle!: string | null;

  @Column({ name: 'latest_version', type: 'integer', nullable: true })
  latestVersion!: number | null;

  @Column({ name: 'next_version', type: 'integer' })
  nextVersion!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @ManyToOne(() => WorkspaceEntity, { createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}
