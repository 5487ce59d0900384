import type { OutcomeEvaluation } from '@mango/domain-sessions';
import type { SessionEntity, SessionEventEntity, SessionMemoryResource } from '@mango/persistence';

/** The wire form of a Session (openapi.yaml `Session`). */
export function renderSession(s: SessionEntity) {
  return {
    id: s.id,
    type: 'session' as const,
    title: s.title,
    status: s.status,
    agent: s.agent,
    environment_id: s.environmentId,
    /** Memory Store attachments: create and get fill them in (`sessionMemoryResources`). */
    resources: [] as SessionMemoryResource[],
    vault_ids: s.vaultIds ?? [],
    metadata: s.metadata,
    budget: s.budget,
    /** The Deployment whose run created the Session (openapi.yaml `Session`), else null. */
    deployment_id: s.deploymentId ?? null,
    usage: s.usage,
    // Active time is accumulated per turn by the orchestrator; duration is the Session's age so far.
    stats: {
      active_seconds: Number((s.usage as { active_seconds?: number }).active_seconds ?? 0),
      duration_seconds: Math.max(0, Math.round((Date.now() - s.createdAt.getTime()) / 1000)),
    },
    /** One per `user.define_outcome`: create, get and list fill them in from the log. */
    outcome_evaluations: [] as OutcomeEvaluation[],
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    archived_at: s.archivedAt ? s.archivedAt.toISOString() : null,
  };
}

/**
 * The wire form of a persisted event: its own fields plus id, type and processed_at. Body fields whose
 * name starts with `_` are internal (e.g. a compaction's summary) and never leave the server.
 */
export function renderEvent(e: SessionEventEntity) {
  const fields = Object.fromEntries(Object.entries(e.body).filter(([k]) => !k.startsWith('_')));
  return {
    id: e.id,
    type: e.type,
    // A delegate Thread's event names its Thread (hosted §3.4.4); the primary's carry none.
    ...(e.sessionThreadId ? { session_thread_id: e.sessionThreadId } : {}),
    ...fields,
    processed_at: e.processedAt ? e.processedAt.toISOString() : null,
  };
}

export type SessionView = ReturnType<typeof renderSession>;
export type EventView = ReturnType<typeof renderEvent>;
