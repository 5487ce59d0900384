import { notFound, unauthenticated } from '@mango/domain-kernel';
import { liveWorkspaceKey, Principal, requireLiveToken } from '@mango/feature-auth';
import { OUTCOME_EVENT_TYPES, OutcomeEvaluation, outcomeEvaluations } from '@mango/domain-sessions';
import { isId } from '@mango/platform-ids';
import {
  entitySelectList,
  runStatement,
  SessionEntity,
  SessionEventEntity,
  sessionMemoryResources,
} from '@mango/persistence';
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

const LOCK_FOR_APPEND = 'mango_session_lock_for_append';
let lockForAppendSql: string | undefined;

/**
 * The caller's Session locked FOR UPDATE for an append (`POST /v1/sessions/{id}/events`), in one prepared
 * statement that also re-checks a Workspace key (`RechecksWorkspaceKey`: the auth guard may have answered
 * from its principal cache): a key revoked before this statement is 401, and nothing is appended with it.
 * A Work token's lease is checked by its own statement (`requireLiveLease`). 404 as `findSession`.
 */
export async function lockSessionForAppend(
  tx: EntityManager,
  p: Principal,
  id: string,
): Promise<SessionEntity> {
  if (!isId('session', id)) throw notFound('session', id);
  const keyId = p.kind === 'workspace' ? p.keyId : null;
  lockForAppendSql ??= `SELECT ${entitySelectList(tx, SessionEntity)} FROM sessions
     WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL AND ($3::text IS NULL OR ${liveWorkspaceKey('$3')})
       FOR UPDATE`;
  const [row] = await runStatement<SessionEntity>(tx, LOCK_FOR_APPEND, lockForAppendSql, [
    id,
    p.workspaceId,
    keyId,
  ]);
  if (row) return Object.assign(new SessionEntity(), row);
  // No row: a revoked key is told so before whether the Session exists.
  if (keyId) {
    const [key]: Array<{ live: boolean }> = await tx.query(`SELECT ${liveWorkspaceKey('$1')} AS live`, [
      keyId,
    ]);
    if (!key?.live) throw unauthenticated('invalid or revoked credential');
  }
  throw notFound('session', id);
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
