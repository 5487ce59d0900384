import type { WorkItemView } from '@mango/persistence';

const time = (d: Date | null) => (d ? d.toISOString() : null);

/** The wire form of a Work item. `secret` is only ever non-null in a Poll response. */
export function renderWork(w: WorkItemView, secret: string | null = null) {
  return {
    id: w.id,
    type: 'work' as const,
    environment_id: w.environmentId,
    data:
      w.kind === 'session'
        ? { type: 'session' as const, id: w.sessionId! }
        : { type: 'healthcheck' as const },
    state: w.state,
    secret,
    metadata: w.metadata,
    result: w.result,
    expires_at: time(w.expiresAt),
    created_at: w.createdAt.toISOString(),
    acknowledged_at: time(w.acknowledgedAt),
    started_at: time(w.startedAt),
    latest_heartbeat_at: time(w.latestHeartbeatAt),
    stop_requested_at: time(w.stopRequestedAt),
    stopped_at: time(w.stoppedAt),
  };
}

export type WorkView = ReturnType<typeof renderWork>;
