import type { ModelResponse, ModelUsage } from '@mango/adapter-model';
import type { AutoEvaluation } from '@mango/domain-agents';
import type { DeclaredMcpTool } from '@mango/domain-mcp';
import {
  addUsage,
  type CallAnswer,
  isActivation,
  isCustomTool,
  isPlatformCall,
  planReplyEvents,
  type PriceTable,
  type ReadReply,
  replyOutcome,
  type SessionUsage,
  stepOutcome,
} from '@mango/domain-sessions';
import type { SessionEntity, SessionLog } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { StepOutcome } from '@mango/workflows';
import type { EntityManager } from 'typeorm';
import { answerActivation, serverToolEvents } from './session-prompt';
import { countUsage, type StoredEvent } from './step-events';
import type { StartedStep } from './step-prepare';
import { carryOutPlatformCall } from './thread-calls';

/** What recording a reply needs: the log, list prices and the token metrics. */
export interface RecordReplyDeps {
  log: SessionLog;
  prices?: PriceTable;
  metrics?: MangoMetrics;
}

/** One reply to record, with what the step decided about it before. */
export interface ReplyToRecord {
  sessionId: string;
  threadId?: string;
  /** The step's key (`[thread:<id>:]turn:<n>:step:<m>`). */
  key: string;
  step: StartedStep;
  response: ModelResponse;
  reply: ReadReply;
  mcpTools: readonly DeclaredMcpTool[];
  /** The `auto` judgements by call index, and the tokens they used. */
  judged: { evaluations: ReadonlyMap<number, AutoEvaluation>; usage: ModelUsage | null };
  /** Pre-allocated event ids: the message and thinking (previewed under them), one per call. */
  ids: { message: string; thinking: string; uses: string[] };
}

/**
 * Records a reply once, under the Session's row lock: the calls answered within the step are carried
 * out (platform calls, Skill activations), the events {@link planReplyEvents} plans appended in one
 * statement with the step's `model_end`, and the usage added to the Session's (and a delegate's
 * Thread's). Answers what the step asks of the workflow.
 */
export async function recordReply(deps: RecordReplyDeps, r: ReplyToRecord): Promise<StepOutcome> {
  const { log } = deps;
  let recorded: { before: SessionUsage; after: SessionUsage } | undefined;
  const appended = await log.withOpenSession(r.sessionId, async (tx, s) => {
    // A concurrent attempt of this step already recorded it (the row lock orders them): only read.
    // The step's events are appended in one statement with its model_end, so without it none is.
    const recordedBefore = await log.eventsByKeyPrefix(tx, r.sessionId, `${r.key}:model_end`);
    if (recordedBefore.length)
      return { uses: await log.eventsByKeyPrefix(tx, r.sessionId, `${r.key}:tool_use:`), fresh: false };
    const now = new Date();
    const { answered, platformEvents } = await answerInStep(tx, s, r, now);
    const planned = planReplyEvents({
      key: r.key,
      threadId: r.threadId,
      reply: r.reply,
      usage: r.response.usage,
      startId: r.step.startId,
      ids: r.ids,
      agent: r.step.agent,
      mcpTools: r.mcpTools,
      judged: r.judged.evaluations,
      answered,
      serverEvents: serverToolEvents(r.response.content, r.key),
      platformEvents,
    });
    const inserted = await log.append(tx, s, planned, now, { unrecorded: true });
    if (inserted.length) recorded = await addStepUsage(deps, { tx, session: s, r });
    // The step's own tool calls, just appended: no result can answer them yet.
    return { uses: inserted.filter((e) => e.idempotencyKey?.startsWith(`${r.key}:tool_use:`)), fresh: true };
  });
  // Counted once the usage is committed (a retried activity that recorded nothing counts nothing).
  if (recorded && deps.metrics) countUsage(deps.metrics, r.step.agent.model.id, r.response.usage, recorded);
  return replyOutcome({
    decided: stepOutcome(appended?.uses ?? []),
    // Calls this attempt recorded have no result yet; an earlier attempt's may (the workflow looks).
    fresh: Boolean(appended?.fresh),
    continues: r.reply.continues,
    stopReason: r.response.stop_reason,
  });
}

/**
 * The calls answered within the step, by index: a coordinator's platform calls (list_agents,
 * send_to_agent, consult_advisor: decided and carried out here, in the transaction that records them,
 * thread-calls.ts) and Skill activations (from Mango's kept copy, session-prompt.ts). Custom tools are
 * never answered here.
 */
async function answerInStep(
  tx: EntityManager,
  s: SessionEntity,
  r: ReplyToRecord,
  now: Date,
): Promise<{ answered: Map<number, CallAnswer>; platformEvents: StoredEvent[] }> {
  const { agent, snapshot, thread, prompt } = r.step;
  const platformEvents: StoredEvent[] = [];
  const answered = new Map<number, CallAnswer>();
  for (const [i, u] of r.reply.uses.entries())
    if (!isCustomTool(agent, u.name) && isPlatformCall(u.name, snapshot, thread.primary)) {
      const done = await carryOutPlatformCall(tx, s, {
        snapshot,
        name: u.name,
        input: u.input,
        key: `${r.key}:platform:${i}`,
        now,
      });
      platformEvents.push(...done.events);
      answered.set(i, done.result);
    } else if (isActivation(u.name, agent, prompt.skills.length > 0))
      answered.set(i, await answerActivation(tx, prompt.skills, u.input));
  return { answered, platformEvents };
}

/**
 * The Session's usage after the reply (and the `auto` judgements, which count like it: list cost,
 * budget); a delegate's usage counts against the Session's (the shared budget) and its own Thread's.
 */
async function addStepUsage(
  deps: RecordReplyDeps,
  at: { tx: EntityManager; session: SessionEntity; r: ReplyToRecord },
): Promise<{ before: SessionUsage; after: SessionUsage }> {
  const { r, session: s } = at;
  const { agent, thread } = r.step;
  const prices = deps.prices ?? {};
  const add = (u: SessionUsage) => {
    const replied = addUsage(agent.model.id, u, r.response.usage, prices);
    return r.judged.usage ? addUsage(agent.model.id, replied, r.judged.usage, prices) : replied;
  };
  const before = s.usage as SessionUsage;
  const after = add(before);
  await deps.log.saveUsage(
    at.tx,
    s,
    after,
    thread.primary ? undefined : { id: thread.id, usage: add((thread.usage ?? {}) as SessionUsage) },
  );
  return { before, after };
}
