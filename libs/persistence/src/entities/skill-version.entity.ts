import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SkillEntity } from './skill.entity';

const bigintAsNumber = {
  to: (value: number) => value,
  from: (value: string | number) => Number(value),
};

/**
 * One immutable version of a Skill: a gzip-compressed tar archive in the object store (`object_key`),
 * its compressed length and SHA-256, and what SKILL.md's frontmatter said. The row exists only once the
 * archive was completely written (same recoverable upload protocol as Files, via `object_cleanups`).
 * Deleting the Skill deletes its versions; the caller records cleanup intents for their objects first.
 */
@Entity({ name: 'skill_versions' })
@Check('skill_versions_version_check', 'version >= 1')
@Check(
  'skill_versions_sizes_check',
  'archive_size_bytes >= 0 AND expanded_size_bytes >= 0 AND file_count >= 1',
)
export class SkillVersionEntity {
  @PrimaryColumn({ name: 'skill_id', type: 'text' })
  skillId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  /** `name` from SKILL.md's frontmatter. */
  @Column({ type: 'text' })
  name!: string;

  /** `description` from SKILL.md's frontmatter. */
  @Column({ type: 'text' })
  description!: string;

  /** The bundle's one top-level directory; every archive member starts with it. */
  @Column({ type: 'text' })
  directory!: string;

  @Index('skill_versions_object_key_key', { unique: true })
  @Column({ name: 'object_key', type: 'text' })
  objectKey!: string;

  @Column({ name: 'archive_size_bytes', type: 'bigint', transformer: bigintAsNumber })
  archiveSizeBytes!: number;

  /** Lower-case hex SHA-256 of the archive bytes. */
  @Column({ name: 'archive_sha256', type: 'text' })
  archiveSha256!: string;

  @Column({ name: 'expanded_size_bytes', type: 'bigint', transformer: bigintAsNumber })
  expandedSizeBytes!: number;

  @Column({ name: 'file_count', type: 'integer' })
  fileCount!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => SkillEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'skill_id' })
  skill?: SkillEntity;
}
