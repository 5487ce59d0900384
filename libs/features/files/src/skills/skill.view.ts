import type { SkillEntity, SkillVersionEntity } from '@mango/persistence';

/** The wire form of a Skill (openapi.yaml `Skill`; Mango has custom Skills only). */
export function renderSkill(s: SkillEntity) {
  return {
    id: s.id,
    type: 'skill' as const,
    display_title: s.displayTitle,
    latest_version: s.latestVersion === null ? null : String(s.latestVersion),
    source: 'custom' as const,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/**
 * The wire form of a Skill version (openapi.yaml `Skill`). Versions are numbered 1, 2, 3… per Skill (as
 * strings, like the hosted API); `id` is the version too. Mango adds the archive's compressed length
 * and SHA-256 (which staging verifies), and its expanded size and file count.
 */
export function renderSkillVersion(v: SkillVersionEntity) {
  return {
    id: String(v.version),
    type: 'skill_version' as const,
    skill_id: v.skillId,
    version: String(v.version),
    name: v.name,
    description: v.description,
    directory: v.directory,
    archive_size_bytes: v.archiveSizeBytes,
    archive_sha256: v.archiveSha256,
    expanded_size_bytes: v.expandedSizeBytes,
    file_count: v.fileCount,
    created_at: v.createdAt.toISOString(),
  };
}

export type SkillView = ReturnType<typeof renderSkill>;
export type SkillVersionView = ReturnType<typeof renderSkillVersion>;
