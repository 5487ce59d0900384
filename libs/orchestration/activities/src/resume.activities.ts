import { resumeStateFromLog, type ResumeLogEvent, type SessionResumeState } from '@mango/domain-sessions';
import type { DataSource } from 'typeorm';

/**
 * The start-from-log read (a local activity, docs/adr/0016-session-workflow-rebuilt-from-the-log.md): the
 * few columns of the Session's log that say where its workflow stands, folded by `resumeStateFromLog`.
 * Read-only, so a retry or a second start reads the same answer. Only turn keys, turn-starting input,
 * interrupts, budget changes and the terminal events are read, not bodies.
 */
export function createResumeActivities(dataSource: DataSource): {
  resumeState(ref: { sessionId: string }): Promise<SessionResumeState>;
} {
  return {
    async resumeState({ sessionId }) {
      const [session]: Array<{ status: string; deleted: boolean }> = await dataSource.query(
        'SELECT status, deleted_at IS NOT NULL AS deleted FROM sessions WHERE id = $1',
        [sessionId],
      );
      const rows: Array<{
        seq: string;
        type: string;
        idempotency_key: string | null;
        stop_reason: string | null;
        budget_changed: boolean;
      }> = await dataSource.query(
        `SELECT seq, type, idempotency_key, body->'stop_reason'->>'type' AS stop_reason,
                (type = 'session.updated' AND body ? 'budget') AS budget_changed
           FROM session_events
          WHERE session_id = $1
            AND (starts_with(idempotency_key, 'turn:')
                 OR type IN ('user.message', 'user.tool_confirmation', 'user.custom_tool_result',
                             'user.interrupt', 'session.updated', 'session.status_terminated', 'session.deleted'))
          ORDER BY seq`,
        [sessionId],
      );
      const events: ResumeLogEvent[] = rows.map((r) => ({
        seq: r.seq,
        type: r.type,
        idempotencyKey: r.idempotency_key,
        stopReason: r.stop_reason,
        budgetChanged: r.budget_changed,
      }));
      const state = resumeStateFromLog(events);
      // A Session that is gone or terminated stops its workflow whatever its log holds.
      if (!session || session.deleted || session.status === 'terminated') state.stopped = true;
      return state;
    },
  };
}
