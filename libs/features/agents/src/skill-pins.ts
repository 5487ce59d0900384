import type { SkillPin } from '@mango/domain-agents';
import { invalidRequest } from '@mango/domain-kernel';
import type { EntityManager } from 'typeorm';

interface SkillFacts {
  id: string;
  latest_version: number | null;
  versions: number[];
}

async function skillFacts(
  em: EntityManager,
  workspaceId: string,
  ids: string[],
): Promise<Map<string, SkillFacts>> {
  if (ids.length === 0) return new Map();
  const rows: SkillFacts[] = await em.query(
    `SELECT s.id, s.latest_version,
            coalesce(array_agg(v.version) FILTER (WHERE v.version IS NOT NULL), '{}') AS versions
       FROM skills s LEFT JOIN skill_versions v ON v.skill_id = s.id
      WHERE s.workspace_id = $1 AND s.id = ANY($2)
      GROUP BY s.id`,
    [workspaceId, ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** The concrete version a pin names now; a 400 naming the pin when the Skill or version does not exist. */
function concreteVersion(pin: SkillPin, facts: SkillFacts | undefined, path: string): number {
  if (!facts) throw invalidRequest(`${path}: skill ${pin.skill_id} not found`);
  if (pin.version === 'latest') {
    if (facts.latest_version === null) throw invalidRequest(`${path}: skill ${pin.skill_id} has no versions`);
    return facts.latest_version;
  }
  const v = Number(pin.version);
  if (!facts.versions.includes(v))
    throw invalidRequest(`${path}: skill ${pin.skill_id} has no version ${pin.version}`);
  return v;
}

/**
 * Agent create/update: every pin that is new or changed must name a Skill of the Workspace and, when
 * numeric, an existing version (`latest` needs at least one version). Pins kept unchanged from the
 * current definition are not re-checked, so deleting a Skill does not block unrelated Agent updates.
 * 400 `invalid_request_error` otherwise.
 */
export async function checkSkillPins(
  em: EntityManager,
  workspaceId: string,
  skills: readonly SkillPin[],
  unchanged: readonly SkillPin[] = [],
): Promise<void> {
  const isKept = (p: SkillPin) => unchanged.some((u) => u.skill_id === p.skill_id && u.version === p.version);
  const toCheck = skills.map((pin, i) => ({ pin, i })).filter(({ pin }) => !isKept(pin));
  const facts = await skillFacts(
    em,
    workspaceId,
    toCheck.map(({ pin }) => pin.skill_id),
  );
  for (const { pin, i } of toCheck) concreteVersion(pin, facts.get(pin.skill_id), `skills[${i}]`);
}

/**
 * Session create: the frozen Agent snapshot's `skills` with every `latest` replaced by the Skill's
 * current latest version (numeric pins are checked to exist). The Session then runs exactly these
 * versions whatever happens to the Skill later. 400 when a Skill or version does not exist.
 */
export async function freezeSkillVersions<T extends { skills: SkillPin[] }>(
  em: EntityManager,
  workspaceId: string,
  snapshot: T,
): Promise<T> {
  const facts = await skillFacts(
    em,
    workspaceId,
    snapshot.skills.map((p) => p.skill_id),
  );
  const skills = snapshot.skills.map((pin, i): SkillPin => ({
    ...pin,
    version: String(concreteVersion(pin, facts.get(pin.skill_id), `agent.skills[${i}]`)),
  }));
  return { ...snapshot, skills };
}
