import { HttpSkillsApi, SkillsApi } from './skills-client';
import { removeStagedSkills, SkillPinRef, StagedSkill, stageSkills } from './stage-skills';

/** The part of a Session (as the Work token reads it) that staging needs. */
export interface SessionWithSkills {
  id: string;
  agent: {
    skills?: ReadonlyArray<{ skill_id: string; version: string }>;
    /** The frozen roster: each roster Agent carries its own frozen Skill pins. */
    multiagent?: {
      agents: ReadonlyArray<{
        type: string;
        id?: string;
        skills?: ReadonlyArray<{ skill_id: string; version: string }>;
      }>;
    } | null;
  };
}

/** Roster Agents' frozen pins from the snapshot (staged below `skills/.agents/<agent_id>/`). */
export function rosterSkillPins(session: SessionWithSkills): SkillPinRef[] {
  const self = session.agent as { id?: string };
  return (session.agent.multiagent?.agents ?? [])
    .filter((a) => a.type === 'agent' && a.id && a.id !== self.id && Array.isArray(a.skills))
    .flatMap((a) =>
      a.skills!.map((s) => ({ skill_id: s.skill_id, version: String(s.version), agent_id: a.id! })),
    );
}

/**
 * For the item runner: stages the Session's frozen primary-Agent pins below `<workdir>/skills` and
 * returns what was staged with a `dispose` that removes the tree (call it when the Work ends, whatever
 * the outcome). Throws SkillStagingError (→ Work Fail) or SkillRetrievalError (→ no Fail, no Stop: the
 * lease expires and the Work is reclaimed). `baseUrl` is where `/v1/skills*` is served with the Work
 * token: the ingress base URL (the same as the API's) in a deployment.
 */
export async function stageSessionSkills(o: {
  session: SessionWithSkills;
  workdir: string;
  baseUrl?: string;
  token?: string;
  client?: SkillsApi;
  signal?: AbortSignal;
  /** Roster Agents' pins (default: the snapshot's frozen roster, see rosterSkillPins). */
  rosterPins?: SkillPinRef[];
}): Promise<{ staged: StagedSkill[]; dispose(): Promise<void> }> {
  const client = o.client ?? new HttpSkillsApi({ baseUrl: o.baseUrl!, token: o.token! });
  const pins: SkillPinRef[] = [
    ...(o.session.agent.skills ?? []).map((s) => ({ skill_id: s.skill_id, version: String(s.version) })),
    ...(o.rosterPins ?? rosterSkillPins(o.session)),
  ];
  // No pins: no tree (and none left over from an earlier activation).
  if (pins.length === 0) {
    await removeStagedSkills(o.workdir);
    return { staged: [], dispose: async () => undefined };
  }
  const { skills } = await stageSkills({
    client,
    sessionId: o.session.id,
    pins,
    root: o.workdir,
    signal: o.signal,
  });
  return { staged: skills, dispose: () => removeStagedSkills(o.workdir) };
}
