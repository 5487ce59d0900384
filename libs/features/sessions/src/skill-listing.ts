import type { SkillPin } from '@mango/domain-agents';
import { invalidRequest } from '@mango/domain-kernel';
import { skillListingProblem } from '@mango/domain-sessions';
import { type FrozenSkill, skillEntries, skillVersionRows } from '@mango/persistence';
import type { EntityManager } from 'typeorm';

/**
 * Session create: the system prompt lists every frozen Skill of the Agent — and of each roster Agent,
 * which sees its own — (docs/api-guide.md "What the model sees"); a Skill set whose listing cannot fit
 * (`SKILL_LISTING_MAX_CHARS`) is refused with a 400 naming the Agent, before anything is written.
 * Answers each Agent's listing entries, in the order given: the Session's own (the first) is frozen
 * into the Session (`prompt_inputs`), so its model steps do not read them again.
 */
export async function checkSkillListings(
  em: EntityManager,
  agents: ReadonlyArray<{ label: string; skills: readonly SkillPin[] }>,
): Promise<FrozenSkill[][]> {
  const rows = await skillVersionRows(
    em,
    agents.flatMap((a) => a.skills),
  );
  return agents.map((a) => {
    const listed = skillEntries(a.skills, rows);
    const problem = skillListingProblem(listed);
    if (problem) throw invalidRequest(`${a.label}: ${problem}`);
    return listed;
  });
}
