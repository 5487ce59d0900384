import { rateLimited } from '@mango/domain-kernel';
import { SessionRepository, type SessionEntity } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { EntityManager } from 'typeorm';

/** `retry-after` (seconds) for a turn refused by the running-Sessions limit: turns last seconds to hours. */
export const TURN_RETRY_AFTER_S = 10;

/**
 * The running-Sessions limit (fair use, docs/api-guide.md "Fair use"): the append that would start a turn
 * (runnable input to an idle Session: a `user.message`, a confirmation or custom tool result that wakes
 * it, or `initial_events` at create) is refused with 429 while the Workspace already has `limit` Sessions
 * with a turn under way. Creating an idle Session is not a turn and is not refused; nor is input to a
 * Session that is already running (it joins the turn under way). Runs in the append's transaction, on the
 * locked Session, so a refusal stores nothing.
 */
export class TurnAdmission {
  constructor(
    private readonly limit: number | null,
    private readonly metrics?: MangoMetrics,
    private readonly sessions: SessionRepository = new SessionRepository(),
  ) {}

  async admit(
    tx: EntityManager,
    session: SessionEntity,
    events: ReadonlyArray<{ runnable?: boolean }>,
  ): Promise<void> {
    if (this.limit === null || session.status !== 'idle' || !events.some((e) => e.runnable)) return;
    const running = await this.sessions.lockAndCountTurns(tx, session.workspaceId);
    if (running < this.limit) return;
    this.metrics?.fairUseRefusals.inc({ limit: 'running_sessions', scope: 'workspace' });
    throw rateLimited(
      `workspace ${session.workspaceId} already has ${running} sessions running (at most ${this.limit}: MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE); send this again once a turn has ended`,
      TURN_RETRY_AFTER_S,
      { limit: 'running_sessions', scope: 'workspace' },
    );
  }
}
