import { primaryThreadId, SessionEventEntity, type SessionLog } from '@mango/persistence';
import { ADVISOR_REF, lastReplyText, type SessionUsage } from '@mango/domain-sessions';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, tracer } from '@mango/platform-tracing';
import type { SessionActivities, TurnRef } from '@mango/workflows';
import { internal, StoredEvent } from './step-events';
import { threadContext } from './thread-context';

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
    async beginTurn({ sessionId, threadId, turn }: TurnRef) {
      await log.withOpenSession(sessionId, async (tx, s) => {
        const t = await threadContext(tx, s, threadId);
        if (!t) return;
        const running = t.primary
          ? internal('session.status_running', {}, `turn:${turn}:running`)
          : {
              ...internal(
                'session.thread_status_running',
                { session_thread_id: t.id, agent_name: t.agentName },
                `${t.keyPrefix}turn:${turn}:running`,
              ),
              sessionThreadId: t.id,
            };
        await log.append(tx, s, [running], new Date());
      });
    },

    async toolResultsReady({ sessionId, toolUseIds }) {
      if (toolUseIds.length === 0) return true;
      return (await log.countToolResults(sessionId, toolUseIds)) >= toolUseIds.length;
    },

    async endTurn({ sessionId, threadId, turn, stopReason, eventIds, unrecordedError, interrupted }) {
      let turnSeconds: number | undefined;
      let turnSpan: { start: Date; end: Date; traceparent?: string } | undefined;
      let finished = false;
      await log.withOpenSession(sessionId, async (tx, s) => {
        const t = await threadContext(tx, s, threadId);
        if (!t) return;
        if (!t.primary) {
          finished = await endThreadTurn(tx, s, t, {
            turn,
            stopReason,
            eventIds,
            unrecordedError,
            interrupted,
          });
          return;
        }
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
            const traceparent = await log.turnTraceparent(tx, sessionId);
            turnSpan = { start: started.createdAt, end: now, traceparent };
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
      return finished ? { finished } : undefined;
    },
  };

  /**
   * A delegate's or the Advisor's turn end (ADR 0017): its `session.thread_status_idle`; then, for a
   * turn that ended (not one an interrupt stopped, nor one waiting on an action or the budget), its last
   * reply as a report — `agent.thread_message_sent` on the Thread and `agent.thread_message_received` on
   * the primary, which wakes the coordinator. An Advisor Thread then terminates itself. Answers whether
   * the Thread is finished.
   */
  async function endThreadTurn(
    tx: Parameters<Parameters<SessionLog['withOpenSession']>[1]>[0],
    s: Parameters<Parameters<SessionLog['withOpenSession']>[1]>[1],
    t: NonNullable<Awaited<ReturnType<typeof threadContext>>>,
    o: {
      turn: number;
      stopReason: string;
      eventIds?: string[];
      unrecordedError?: string;
      interrupted?: boolean;
    },
  ): Promise<boolean> {
    const key = `${t.keyPrefix}turn:${o.turn}`;
    const own = (e: StoredEvent): StoredEvent => ({ ...e, sessionThreadId: t.id });
    const planned: StoredEvent[] = [];
    if (o.unrecordedError)
      planned.push(
        own(
          internal(
            'session.error',
            {
              error: {
                type: 'unknown_error',
                message: o.unrecordedError.slice(0, 1000),
                retry_status: { type: 'exhausted' },
              },
            },
            `${key}:error`,
          ),
        ),
      );
    planned.push(
      own(
        internal(
          'session.thread_status_idle',
          {
            session_thread_id: t.id,
            agent_name: t.agentName,
            stop_reason: o.eventIds?.length
              ? { type: o.stopReason, event_ids: o.eventIds }
              : { type: o.stopReason },
          },
          `${key}:idle`,
        ),
      ),
    );
    const reports = !o.interrupted && (o.stopReason === 'end_turn' || o.stopReason === 'retries_exhausted');
    if (reports) {
      const turnEvents = await log.eventsByKeyPrefix(tx, s.id, `${key}:`);
      const text =
        lastReplyText(turnEvents) ??
        (o.stopReason === 'retries_exhausted'
          ? `${t.agentName} stopped: its model requests failed.`
          : `${t.agentName} finished without a reply.`);
      const content = [{ type: 'text', text }];
      const primary = primaryThreadId(s.id);
      const coordinator = String((s.agent as { name?: unknown }).name ?? 'agent');
      planned.push(
        own(
          internal(
            'agent.thread_message_sent',
            { to_session_thread_id: primary, to_agent_name: coordinator, content },
            `${key}:report_sent`,
          ),
        ),
        {
          ...internal(
            'agent.thread_message_received',
            { from_session_thread_id: t.id, from_agent_name: t.agentName, content },
            `${key}:report`,
          ),
          // Input of the coordinator's next turn (it needs the Session's worker like a message does).
          runnable: true,
        },
      );
    }
    const advisorDone = t.agentRef === ADVISOR_REF && reports;
    if (advisorDone)
      planned.push(
        own(
          internal(
            'session.thread_status_terminated',
            { session_thread_id: t.id, agent_name: t.agentName },
            `${key}:terminated`,
          ),
        ),
      );
    await log.append(tx, s, planned, new Date());
    return advisorDone;
  }
}
