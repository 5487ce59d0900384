import type { AgentDefinition } from '@mango/domain-agents';
import {
  type CoordinatorSnapshot,
  threadAgent,
  threadAgentName,
  threadKeyPrefix,
} from '@mango/domain-sessions';
import { primaryThreadId, type SessionEntity, SessionThreadRepository } from '@mango/persistence';
import type { EntityManager } from 'typeorm';

/**
 * Which Thread an activity works for (ADR 0017), read in its transaction: the primary (the Session's
 * own Agent) or a delegate / Advisor Thread (its roster entry's frozen Agent). Every event the activity
 * appends carries `sessionThreadId` and keys under `keyPrefix`.
 */
export interface ThreadContext {
  /** The Thread's id (the primary's derived one for the primary). */
  id: string;
  primary: boolean;
  /** `session_thread_id` of its events: undefined for the primary. */
  sessionThreadId?: string;
  /** Idempotency-key prefix of its events: '' for the primary, `thread:<id>:` for a child. */
  keyPrefix: string;
  /** The Agent it runs. */
  agent: AgentDefinition;
  /** `agent_name` on its lifecycle events. */
  agentName: string;
  agentRef: string | null;
  /** The Thread's own usage (a child's; the primary's is the Session's). */
  usage: Record<string, unknown> | null;
  /** An archive was asked for or finished: the Thread takes no more turns. */
  closed: boolean;
  /** The Thread's status (the primary's is the Session's own projection). */
  status: string;
  /** The roster entry's Agent id (a delegate's: where its Skills are staged), or undefined. */
  agentId?: string;
}

const threads = new SessionThreadRepository();

/** The Thread an activity ref names, or undefined when a child Thread does not exist (nothing to do). */
export async function threadContext(
  tx: EntityManager,
  s: SessionEntity,
  threadId?: string,
): Promise<ThreadContext | undefined> {
  const snapshot = s.agent as unknown as CoordinatorSnapshot & AgentDefinition;
  if (!threadId) {
    // The primary's own status (the Session's is the aggregate of every Thread's once delegates run).
    const own = await threads.get(tx, s.id, primaryThreadId(s.id));
    return {
      id: primaryThreadId(s.id),
      primary: true,
      keyPrefix: '',
      agent: snapshot,
      agentName: threadAgentName(snapshot, null),
      agentRef: null,
      usage: null,
      closed: false,
      status: own?.status ?? s.status,
    };
  }
  const row = await threads.get(tx, s.id, threadId);
  if (!row || row.parentThreadId === null || row.agentRef === null) return undefined;
  const agent = threadAgent(snapshot, row.agentRef);
  if (!agent) return undefined;
  return {
    id: row.id,
    primary: false,
    sessionThreadId: row.id,
    keyPrefix: threadKeyPrefix(row.id),
    agent,
    agentName: threadAgentName(snapshot, row.agentRef),
    agentRef: row.agentRef,
    usage: row.usage,
    closed: Boolean(row.archivedAt || row.archiveRequestedAt),
    status: row.status,
    agentId: (snapshot.multiagent?.agents?.[Number(row.agentRef)] as { id?: string } | undefined)?.id,
  };
}
