import { SessionEventEntity, type SessionLog } from '@mango/persistence';
import type { SessionUsage } from '@mango/domain-sessions';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, tracer } from '@mango/platform-tracing';
import type { SessionActivities, TurnRef } from '@mango/workflows';
import { internal, StoredEvent, traceparentOf } from './step-events';

/**
 * Turn bookkeeping (local activities): a turn's `session.status_running`, the wait for tool results, and
 * its end (`session.status_idle` with the stop reason, active time, the turn's span).
 */
export function createTurnActivities(
  log: SessionLog,
  metrics?: MangoMetrics,
): Pick<SessionActivities, 'beginTurn' | 'toolResultsReady' | 'endTurn'> {
  const deps = { metrics };
  return {
    async beginTurn({ sessionId, turn }: TurnRef) {
      await log.withOpenSession(sessionId, async (tx, s) => {
        await log.append(tx, s, [internal('session.status_running', {}, `turn:${turn}:running`)], new Date());
      });
    },

    async toolResultsReady({ sessionId, toolUseIds }) {
      if (toolUseIds.length === 0) return true;
      return (await log.countToolResults(sessionId, toolUseIds)) >= toolUseIds.length;
    },

    async endTurn({ sessionId, turn, stopReason, eventIds, unrecordedError }) {
      let turnSeconds: number | undefined;
      let turnSpan: { start: Date; end: Date; traceparent?: string } | undefined;
      await log.withOpenSession(sessionId, async (tx, s) => {
        const planned: StoredEvent[] = [];
        if (unrecordedError)
          planned.push(
            internal(
              'session.error',
              {
                error: {
                  type: 'unknown_error',
                  message: unrecordedError.slice(0, 1000),
                  retry_status: { type: 'exhausted' },
                },
              },
              `turn:${turn}:error`,
            ),
          );
        if (stopReason === 'budget_reached')
          planned.push(internal('session.usage', { usage: s.usage, budget: s.budget }, `turn:${turn}:usage`));
        planned.push(
          internal(
            'session.status_idle',
            {
              stop_reason: eventIds?.length
                ? { type: stopReason, event_ids: eventIds }
                : { type: stopReason },
            },
            `turn:${turn}:idle`,
          ),
        );
        const now = new Date();
        const inserted = await log.append(tx, s, planned, now);
        // Active time (usage.active_seconds): the turn's wall time, from its status_running to this idle.
        if (inserted.some((e) => e.type === 'session.status_idle')) {
          const started = await tx.findOne(SessionEventEntity, {
            where: { sessionId, idempotencyKey: `turn:${turn}:running` },
          });
          if (started) {
            const usage = s.usage as SessionUsage;
            const seconds = Math.max(0, (now.getTime() - started.createdAt.getTime()) / 1000);
            turnSeconds = seconds;
            const origin = await tx.findOne(SessionEventEntity, {
              where: { sessionId, type: 'user.message' },
              order: { seq: 'DESC' },
            });
            turnSpan = { start: started.createdAt, end: now, traceparent: traceparentOf(origin?.body) };
            await log.saveUsage(tx, s, {
              ...usage,
              active_seconds: Math.round(((Number(usage.active_seconds) || 0) + seconds) * 1000) / 1000,
            });
          }
        }
      });
      if (turnSeconds !== undefined)
        deps.metrics?.turnDuration.observe({ stop_reason: stopReason }, turnSeconds);
      // The turn as one span (status_running → status_idle), in the trace of the message that started it.
      if (turnSpan)
        tracer()
          .startSpan(
            'mango.session.turn',
            {
              startTime: turnSpan.start,
              attributes: {
                'mango.session.id': sessionId,
                'mango.turn': turn,
                'mango.stop_reason': stopReason,
              },
            },
            contextFrom(turnSpan.traceparent),
          )
          .end(turnSpan.end);
    },
  };
}
