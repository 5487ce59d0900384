import { canonicalJson, conflict, FileTextReader, invalidRequest } from '@mango/domain-kernel';
import { Principal, requireLiveToken } from '@mango/feature-auth';
import {
  activeOutcome,
  type ClientEvent,
  closesOpenCalls,
  OUTCOME_EVENT_TYPES,
  parseEventsBody,
  threadLog,
} from '@mango/domain-sessions';
import {
  primaryThreadId,
  requireLiveLease,
  SessionEventEntity,
  SessionLog,
  SessionThreadRepository,
} from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, tracer, tracingEnabled } from '@mango/platform-tracing';
import { DataSource, EntityManager, In } from 'typeorm';
import {
  answeredByPlatform,
  answerOf,
  answerTargetTypes,
  checkBudgetPause,
  checkEventCount,
  checkPoster,
  isAnswerable,
} from './event-admission';
import { EventView, renderEvent } from './session.view';
import { lockSessionForAppend, sessionIdFor } from './session-reads';
import { admitFileDocuments } from './file-documents';
import { toStored } from './stored-event';
import type { SessionServiceLimits } from './session-limits';
import { TurnAdmission } from './turn-admission';

/**
 * Event admission (openapi.yaml `POST /v1/sessions/{id}/events`): the pure rules are in event-admission.ts;
 * the ones that read the log (answered once, closed calls, permissions, the budget pause) run here on the
 * locked Session.
 */
export class SendEvents {
  constructor(
    private readonly dataSource: DataSource,
    private readonly log: SessionLog,
    private readonly metrics: MangoMetrics,
    private readonly limits: SessionServiceLimits,
    private readonly files?: FileTextReader,
    private readonly threads: SessionThreadRepository = new SessionThreadRepository(),
    private readonly turns: TurnAdmission = new TurnAdmission(null),
  ) {}

  /**
   * Appends client events. A Workspace key sends messages and interrupts; the Session's own Work token
   * sends only `user.tool_result`, checked against its live lease in the same transaction. Each tool call
   * is answered once: an identical retry returns the stored event, a different answer is 409.
   */
  async execute(p: Principal, id: string, body: unknown): Promise<{ data: EventView[] }> {
    // A dead Work token is 401 whatever it sends (before any question of shape or permission).
    requireLiveToken(p);
    const events = parseEventsBody(body);
    checkEventCount(events, 'events', this.limits.eventsPerRequest);
    checkPoster(p.kind === 'work', events);
    await admitFileDocuments(this.files, p.workspaceId, events);
    // Tool results accepted in this call, observed once the transaction committed.
    const answered: Array<{
      tool: string;
      kind: 'sandbox' | 'custom';
      isError: boolean;
      since: Date;
      callId: string;
      traceparent?: string;
    }> = [];
    const out = await this.dataSource.transaction(async (tx) => {
      const session = await lockSessionForAppend(tx, p, sessionIdFor(p, id));
      if (session.archivedAt) throw conflict(`session ${session.id} is archived; events are not accepted`);
      if (session.status === 'terminated') throw conflict(`session ${session.id} is terminated`);
      // The Work item's current token and live lease, held FOR SHARE until the append commits.
      if (p.kind === 'work') await requireLiveLease(tx, p, session.id);
      const paused = await this.log.pausedAtBudget(tx, session);
      checkBudgetPause(paused, events);
      // One outcome at a time: a new one is accepted once the current one ended.
      if (events.some((e) => e.type === 'user.define_outcome')) {
        const current = activeOutcome(
          await tx.find(SessionEventEntity, {
            where: { sessionId: session.id, type: In([...OUTCOME_EVENT_TYPES]) },
            order: { seq: 'ASC' },
          }),
        );
        if (current)
          throw conflict(
            `session ${session.id} is still working on outcome ${current.outcome_id} (${current.result}); define the next outcome once it ends`,
          );
      }
      const now = new Date();
      const stored: EventView[] = [];
      const fresh: Array<ReturnType<typeof toStored>> = [];
      for (const e of events) {
        const answer = answerOf(e);
        if (!answer) {
          // An interrupt at a budget pause is accepted and ignored: there is no turn to stop.
          if (!(paused && e.type === 'user.interrupt')) fresh.push(await this.onThread(tx, session.id, e));
          continue;
        }
        // The call and any stored answer to it, in one read. A confirmation answers a sandbox or an MCP
        // call that asked; results answer only their own kind.
        const { target, prior } = await this.callAndAnswer(tx, session.id, answer);
        if (target && answeredByPlatform(target))
          throw invalidRequest(
            `${answer.targetId} was run by Mango or the model endpoint; it takes no ${e.type}`,
          );
        if (!target || !isAnswerable(answer, target)) {
          throw invalidRequest(
            `${answer.targetId} is not ${answer.needsAsk ? 'an agent.tool_use awaiting confirmation' : `an ${answer.targetType}`} of this session`,
          );
        }
        if (e.type === 'user.tool_result') await this.requireRunnable(tx, session.id, target);
        // Each call is answered once: an identical retry returns the stored event, a different answer is 409.
        if (prior) {
          if (canonicalJson(prior.body) !== canonicalJson(answer.body))
            throw conflict(`${answer.targetId} already has a different ${e.type}`);
          stored.push(renderEvent(prior));
          continue;
        }
        // The answer belongs to the call's Thread (ADR 0017): a `session_thread_id` the client echoes must
        // be that Thread's.
        const echoed = 'session_thread_id' in e ? e.session_thread_id : undefined;
        const owner = target.sessionThreadId ?? null;
        if (echoed !== undefined && echoed !== (owner ?? primaryThreadId(session.id)))
          throw invalidRequest(
            `${answer.targetId} belongs to thread ${owner ?? primaryThreadId(session.id)}, not ${echoed}`,
          );
        await this.requireOpen(tx, session.id, target, e.type);
        if (e.type === 'user.tool_result' || e.type === 'user.custom_tool_result')
          answered.push({
            tool: String(target.body.name ?? 'unknown'),
            kind: e.type === 'user.tool_result' ? 'sandbox' : 'custom',
            isError: e.is_error === true,
            since: target.createdAt,
            callId: target.id,
            // The call's span joins the trace of the turn that made it (the message before the call).
            traceparent: tracingEnabled()
              ? await this.log.turnTraceparent(tx, session.id, target.seq)
              : undefined,
          });
        fresh.push({
          ...toStored(e),
          processed: true,
          ...(answer.key ? { idempotencyKey: answer.key } : { toolUseId: answer.targetId }),
          ...(owner ? { sessionThreadId: owner } : {}),
        });
      }
      // Input that would start a turn counts against the Workspace's running-Sessions limit (fair use).
      await this.turns.admit(tx, session, fresh);
      const rows = await this.log.append(tx, session, fresh, now);
      return { data: [...stored, ...rows.map(renderEvent)], now, sessionId: session.id };
    });
    for (const a of answered) {
      const outcome = a.isError ? 'error' : 'ok';
      this.metrics.toolCallDuration.observe(
        { tool: a.tool, kind: a.kind, outcome },
        Math.max(0, (out.now.getTime() - a.since.getTime()) / 1000),
      );
      // `mango.tool_use <name>`: from the tool use to its result (ids and outcome only, never input or output).
      tracer()
        .startSpan(
          `mango.tool_use ${a.tool}`,
          {
            startTime: a.since,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': a.tool,
              'gen_ai.tool.call.id': a.callId,
              'mango.session.id': out.sessionId,
              'mango.tool.kind': a.kind,
              'mango.outcome': outcome,
            },
          },
          contextFrom(a.traceparent),
        )
        .end(out.now);
    }
    return { data: out.data };
  }

  /**
   * An event that names no call, as stored: an interrupt with a delegate's `session_thread_id` stops
   * only that Thread (stored on it); without one, or with the primary's, it is Session-wide (ADR 0017).
   */
  private async onThread(tx: EntityManager, sessionId: string, e: ClientEvent) {
    const stored = toStored(e);
    const threadId = (e as { session_thread_id?: string }).session_thread_id;
    if (e.type !== 'user.interrupt' || !threadId || threadId === primaryThreadId(sessionId)) return stored;
    const thread = await this.threads.get(tx, sessionId, threadId);
    if (!thread)
      throw invalidRequest(`session_thread_id ${threadId} is not a thread of session ${sessionId}`);
    return { ...stored, sessionThreadId: thread.id };
  }

  /**
   * The call an answer targets (an event of one of its target types) and the answer already stored for
   * it (by idempotency key for confirmations, else by `tool_use_id`), read in one query.
   */
  private async callAndAnswer(
    tx: EntityManager,
    sessionId: string,
    answer: NonNullable<ReturnType<typeof answerOf>>,
  ): Promise<{ target: SessionEventEntity | null; prior: SessionEventEntity | null }> {
    const types = answerTargetTypes(answer);
    const rows = await tx.find(SessionEventEntity, {
      where: [
        { id: answer.targetId, sessionId, type: In(types) },
        answer.key ? { sessionId, idempotencyKey: answer.key } : { sessionId, toolUseId: answer.targetId },
      ],
    });
    const isPrior = (e: SessionEventEntity) =>
      answer.key ? e.idempotencyKey === answer.key : e.toolUseId === answer.targetId;
    return {
      target: rows.find((e) => e.id === answer.targetId && types.includes(e.type)) ?? null,
      prior: rows.find(isPrior) ?? null,
    };
  }

  /**
   * A call an interrupt (or a turn that ended without it) closed takes no new answer: the model already
   * saw it as interrupted. (Checked after the stored-answer lookup, so an identical retry still succeeds.)
   */
  private async requireOpen(
    tx: EntityManager,
    sessionId: string,
    call: SessionEventEntity,
    type: string,
  ): Promise<void> {
    // What closes a call is its own Thread's (a Session-wide interrupt closes every Thread's).
    const later: Array<Pick<SessionEventEntity, 'type' | 'body' | 'sessionThreadId'>> = await tx
      .createQueryBuilder(SessionEventEntity, 'e')
      .select(['e.type', 'e.body', 'e.sessionThreadId'])
      .where('e.session_id = :sessionId AND e.seq > :seq', { sessionId, seq: call.seq })
      .andWhere(`(e.type IN ('user.interrupt', 'session.status_idle', 'session.thread_status_idle'))`)
      .orderBy('e.seq', 'ASC')
      .getMany();
    const own = threadLog(
      later.map((e) => ({ ...e, sessionThreadId: e.sessionThreadId ?? null })),
      call.sessionThreadId,
    );
    if (own.some((e) => closesOpenCalls(e)))
      throw conflict(`${call.id} was interrupted before it completed; it takes no ${type}`);
  }

  /** A denied call never runs; an `ask` call runs only after a persisted allow. */
  private async requireRunnable(
    tx: EntityManager,
    sessionId: string,
    use: SessionEventEntity,
  ): Promise<void> {
    const permission = use.body.evaluated_permission;
    if (permission === 'deny') throw conflict(`${use.id} was denied by policy and is never run`);
    if (permission !== 'ask') return;
    const confirmation = await tx.findOne(SessionEventEntity, {
      where: { sessionId, idempotencyKey: `confirmation:${use.id}` },
    });
    if (confirmation?.body.result !== 'allow')
      throw conflict(`${use.id} has no allow confirmation; it must not run`);
  }
}
