import type { FrozenSkill, PromptInputs, PromptMemoryStore } from '@mango/domain-sessions';
import type { EntityManager } from 'typeorm';
import type { SessionMemoryResource } from './session-memory-attachments';

/** Where they were declared before they moved to the domain (libs/domain/sessions model-request.ts). */
export type { FrozenSkill, PromptInputs };

/** A Skill pin of an Agent snapshot (`skills[]`; the version is a number or its decimal string). */
export interface SkillPinRef {
  skill_id: string;
  version: string | number;
}

interface SkillVersionRow {
  skill_id: string;
  version: number;
  name: string;
  description: string;
}

/** The name and description of each pinned version that exists, in one query (any order). */
export function skillVersionRows(
  em: EntityManager,
  pins: readonly SkillPinRef[],
): Promise<SkillVersionRow[]> {
  if (pins.length === 0) return Promise.resolve([]);
  return em.query(
    `SELECT v.skill_id, v.version, v.name, v.description
       FROM skill_versions v
       JOIN unnest($1::text[], $2::int[]) AS p(skill_id, version)
         ON p.skill_id = v.skill_id AND p.version = v.version`,
    [pins.map((p) => p.skill_id), pins.map((p) => Number(p.version))],
  );
}

/** The Skill listing entries of `pins`, in pin order; a pin whose version is gone is left out. */
export function skillEntries(pins: readonly SkillPinRef[], rows: readonly SkillVersionRow[]): FrozenSkill[] {
  return pins.flatMap((p) => {
    const version = Number(p.version);
    const r = rows.find((x) => x.skill_id === p.skill_id && Number(x.version) === version);
    return r
      ? [
          {
            skillId: p.skill_id,
            version,
            name: r.name,
            description: r.description,
            path: `skills/${r.name}/`,
          },
        ]
      : [];
  });
}

/** The Memory section's entries of a Session's `memory_store` resources, in attachment order. */
export function memoryMounts(resources: readonly SessionMemoryResource[]): PromptMemoryStore[] {
  return resources.map((m) => ({
    name: m.name,
    mount_path: m.mount_path,
    access: m.access,
    instructions: m.instructions,
  }));
}
