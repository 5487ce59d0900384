import { resumeStateFromLog, type SessionResumeState } from '@mango/domain-sessions';
import type { SessionLog } from '@mango/persistence';

/**
 * The start-from-log read (a local activity, docs/adr/0016-session-workflow-rebuilt-from-the-log.md): the
 * few columns of the Session's log that say where its workflow stands (`SessionLog.resumeLog`), folded by
 * `resumeStateFromLog`. Read-only, so a retry or a second start reads the same answer.
 */
export function createResumeActivities(log: SessionLog): {
  resumeState(ref: { sessionId: string }): Promise<SessionResumeState>;
} {
  return {
    async resumeState({ sessionId }) {
      const { session, events } = await log.resumeLog(sessionId);
      const state = resumeStateFromLog(events);
      // A Session that is gone or terminated stops its workflow whatever its log holds.
      if (!session || session.deleted || session.status === 'terminated') state.stopped = true;
      return state;
    },
  };
}
