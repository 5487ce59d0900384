import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SkillVersionEntity } from './skill-version.entity';

/**
 * One file of an immutable Skill version, as Mango keeps it next to the archive so that the Agent loop
 * can activate the Skill without the object store or the worker's filesystem (docs/api-guide.md "What
 * the model sees"): its path below the bundle's directory and, for UTF-8 text files within the limits,
 * its content (null otherwise). Written in the transaction that inserts the version; deleted with it.
 */
@Entity({ name: 'skill_version_files' })
export class SkillVersionFileEntity {
  @PrimaryColumn({ name: 'skill_id', type: 'text' })
  skillId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  /** Relative to the bundle's top-level directory, e.g. `SKILL.md`, `reference/forms.md`. */
  @PrimaryColumn({ type: 'text' })
  path!: string;

  /** The text, or null for a binary file or one over the kept-text limits. */
  @Column({ type: 'text', nullable: true })
  content!: string | null;

  @ManyToOne(() => SkillVersionEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn([
    { name: 'skill_id', referencedColumnName: 'skillId' },
    { name: 'version', referencedColumnName: 'version' },
  ])
  skillVersion?: SkillVersionEntity;
}
