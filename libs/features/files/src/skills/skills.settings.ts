import { SKILL_LIMITS } from '@mango/domain-kernel';

/** Skill bundle limits; apps/files fills them from its env DTO. */
export interface SkillsSettings {
  /** Largest accepted bundle: expanded bytes, and compressed archive bytes (413 beyond). */
  maxBytes: number;
  /** Most files in one bundle (400 beyond). */
  maxFiles: number;
}

export const DEFAULT_SKILLS_SETTINGS: SkillsSettings = {
  maxBytes: SKILL_LIMITS.bundleBytes,
  maxFiles: SKILL_LIMITS.bundleFiles,
};

export const SKILLS_SETTINGS = Symbol('SKILLS_SETTINGS');
