import { notFound } from '@mango/domain-kernel';
import { Principal, requireLiveToken } from '@mango/feature-auth';
import { OUTCOME_EVENT_TYPES, OutcomeEvaluation, outcomeEvaluations } from '@mango/domain-sessions';
import { isId } from '@mango/platform-ids';
import { SessionEntity, SessionEventEntity, sessionMemoryResources } from '@mango/persistence';
import { EntityManager, In, IsNull } from 'typeorm';
import { renderSession, SessionView } from './session.view';

/** Reads every Sessions use case shares: the Session by id, the Work token's scope, the wire form. */

export type Query = Record<string, unknown>;

export async function findSession(
  em: EntityManager,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<SessionEntity> {
  if (!isId('session', id)) throw notFound('session', id);
  const s = await em.findOne(SessionEntity, {
    where: { id, workspaceId, deletedAt: IsNull() },
    ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!s) throw notFound('session', id);
  return s;
}

/** A Work token reads and writes only its own Session; anything else is invisible (404). */
export function sessionIdFor(p: Principal, id: string): string {
  if (p.kind === 'work') {
    requireLiveToken(p);
    if (p.sessionId !== id) throw notFound('session', id);
  }
  return id;
}

/** Sessions on the wire, with their resources (Memory Store attachments) read in one query. */
export async function renderSessions(em: EntityManager, sessions: SessionEntity[]): Promise<SessionView[]> {
  const resources = await sessionMemoryResources(
    em,
    sessions.map((s) => s.id),
  );
  const outcomes = await outcomesOf(
    em,
    sessions.map((s) => s.id),
  );
  return sessions.map((s) => ({
    ...renderSession(s),
    resources: resources.get(s.id) ?? [],
    outcome_evaluations: outcomes.get(s.id) ?? [],
  }));
}

/** `session.outcome_evaluations`, folded from each Session's outcome events (one query). */
export async function outcomesOf(
  em: EntityManager,
  ids: string[],
): Promise<Map<string, OutcomeEvaluation[]>> {
  const out = new Map<string, OutcomeEvaluation[]>();
  if (ids.length === 0) return out;
  const rows = await em.find(SessionEventEntity, {
    where: { sessionId: In(ids), type: In([...OUTCOME_EVENT_TYPES]) },
    order: { seq: 'ASC' },
  });
  for (const id of ids) {
    const mine = rows.filter((r) => r.sessionId === id);
    if (mine.length) out.set(id, outcomeEvaluations(mine));
  }
  return out;
}
