import {
  ADVISOR_AGENT_NAME,
  ADVISOR_REF,
  THREAD_LIFECYCLE_EVENT_TYPES,
  type ThreadStream,
  visibleOn,
} from '@mango/domain-sessions';
import type { SessionEventEntity, SessionThreadEntity } from '@mango/persistence';

/**
 * The Thread read paths (ADR 0017): the wire form of a Thread (openapi.yaml `SessionThread`) and which
 * of the Session's events a Thread's history and stream show — `visibleOn` (libs/domain/sessions
 * `thread-visibility.ts`) for streamed rows, and the same rule as SQL for the paged history read.
 */

/** A thread stream's {@link ThreadStream}. */
export function threadStream(
  thread: Pick<SessionThreadEntity, 'id' | 'parentThreadId'>,
): Extract<ThreadStream, { kind: 'thread' }> {
  return { kind: 'thread', threadId: thread.id, primary: thread.parentThreadId === null };
}

/** Whether a stored event shows on `stream` (the SSE path: one row at a time). */
export function rowVisibleOn(stream: ThreadStream, row: SessionEventEntity): boolean {
  return visibleOn(stream, {
    type: row.type,
    sessionThreadId: row.sessionThreadId ?? null,
    evaluatedPermission: (row.body as { evaluated_permission?: string }).evaluated_permission ?? null,
  });
}

/** A WHERE fragment on `session_events` (alias `e`) and its parameters. */
export interface EventFilter {
  where: string;
  params: Record<string, unknown>;
}

/**
 * {@link visibleOn} for one Thread's stream as SQL over `session_events` (alias `e`), for the paged
 * history read. The int test compares the two on every event kind.
 */
export function threadEventFilter(stream: Extract<ThreadStream, { kind: 'thread' }>): EventFilter {
  const params = { threadId: stream.threadId };
  if (!stream.primary)
    return { where: `(e.session_thread_id = :threadId OR e.type = 'session.deleted')`, params };
  return {
    where: `(e.session_thread_id IS NULL OR e.session_thread_id = :threadId
             OR e.type IN (:...crossPosted)
             OR (e.type IN ('agent.tool_use', 'agent.mcp_tool_use') AND e.body->>'evaluated_permission' = 'ask'))`,
    params: {
      ...params,
      crossPosted: [
        'session.deleted',
        ...THREAD_LIFECYCLE_EVENT_TYPES,
        'agent.custom_tool_use',
        'user.tool_confirmation',
        'user.custom_tool_result',
      ],
    },
  };
}

/**
 * The wire form of a Thread. The primary runs the Session's own Agent snapshot (without its roster); a
 * delegate runs its roster entry (`agent_ref`, an index into the frozen roster). The primary is archived
 * with its Session, so its `archived_at` is the Session's.
 */
export function renderThread(
  t: SessionThreadEntity,
  session: { agent: unknown; usage: unknown; archived_at: string | null },
) {
  const primary = t.parentThreadId === null;
  const { multiagent, ...self } = session.agent as Record<string, unknown> & {
    multiagent?: { agents?: unknown[] } | null;
  };
  // An Advisor Thread shows its roster entry as the Advisor (hosted `Advisor`): its name and model.
  const advisor = (multiagent?.agents ?? []).find((a) => (a as { type?: string }).type === 'advisor') as
    { model?: string } | undefined;
  const agent = primary
    ? self
    : t.agentRef === ADVISOR_REF
      ? { type: 'advisor', name: ADVISOR_AGENT_NAME, model: advisor?.model ?? null }
      : (multiagent?.agents?.[Number(t.agentRef)] ?? null);
  const archivedAt = t.archivedAt?.toISOString() ?? (primary ? session.archived_at : null);
  return {
    id: t.id,
    type: 'session_thread' as const,
    session_id: t.sessionId,
    parent_thread_id: t.parentThreadId,
    agent,
    status: t.status,
    stats: t.stats,
    usage: t.usage ?? (primary ? session.usage : null),
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
    archived_at: archivedAt,
  };
}
