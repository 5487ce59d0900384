import { resumeStateFromLog, type SessionResumeState } from '@mango/domain-sessions';
import type { SessionLog } from '@mango/persistence';

/**
 * The start-from-log read (a local activity, docs/adr/0016-session-workflow-rebuilt-from-the-log.md): the
 * few columns of the Session's log that say where its workflow stands (`SessionLog.resumeLog`), folded by
 * `resumeStateFromLog`. Read-only, so a retry or a second start reads the same answer.
 */
export function createResumeActivities(log: SessionLog): {
  resumeState(ref: { sessionId: string; threadId?: string }): Promise<SessionResumeState>;
} {
  return {
    async resumeState({ sessionId, threadId }) {
      // A Thread's workflow folds that Thread's events (ADR 0017 "Recovery and replay").
      const { session, events, thread } = await log.resumeLog(sessionId, threadId);
      const state = resumeStateFromLog(events);
      // A Session that is gone or terminated stops its workflow whatever its log holds.
      if (!session || session.deleted || session.status === 'terminated') state.stopped = true;
      // A Thread that is archived (or asked to be) or terminated takes no more turns.
      if (thread && !thread.open) state.stopped = true;
      return state;
    },
  };
}
