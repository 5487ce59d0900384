import type { SkillPin } from '@mango/domain-agents';
import { invalidRequest } from '@mango/domain-kernel';
import { skillListingProblem } from '@mango/domain-sessions';
import type { EntityManager } from 'typeorm';

/**
 * Session create: the system prompt lists every frozen Skill of the Agent — and of each roster Agent,
 * which sees its own — (docs/api-guide.md "What the model sees"); a Skill set whose listing cannot fit
 * (`SKILL_LISTING_MAX_CHARS`) is refused with a 400 naming the Agent, before anything is written.
 */
export async function checkSkillListings(
  em: EntityManager,
  agents: ReadonlyArray<{ label: string; skills: readonly SkillPin[] }>,
): Promise<void> {
  const pins = agents.flatMap((a) => a.skills);
  if (pins.length === 0) return;
  const rows: Array<{ skill_id: string; version: number; name: string; description: string }> =
    await em.query(
      `SELECT v.skill_id, v.version, v.name, v.description
       FROM skill_versions v
       JOIN unnest($1::text[], $2::int[]) AS p(skill_id, version)
         ON p.skill_id = v.skill_id AND p.version = v.version`,
      [pins.map((p) => p.skill_id), pins.map((p) => Number(p.version))],
    );
  for (const a of agents) {
    const listed = a.skills.flatMap((p) => {
      const r = rows.find((x) => x.skill_id === p.skill_id && Number(x.version) === Number(p.version));
      return r ? [{ name: r.name, description: r.description, path: `skills/${r.name}/` }] : [];
    });
    const problem = skillListingProblem(listed);
    if (problem) throw invalidRequest(`${a.label}: ${problem}`);
  }
}
