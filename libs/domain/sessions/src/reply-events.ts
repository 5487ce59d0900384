import {
  type AgentDefinition,
  type AutoEvaluation,
  autoPermission,
  type EvaluatedPermission,
  evaluatePermission,
} from '@mango/domain-agents';
import { MAX_TOKENS_CONTINUATIONS } from './model-profiles';
import { type StepDecision, stepOutcome } from './model-step';
import { threadKeyPrefix } from './thread-orchestration';
import type { LogEvent } from './tool-calls';

/**
 * What a model reply means (ADR 0004): which events one step appends for it, and what the step then asks
 * of the workflow. Pure: the model-step activity reads the reply, carries out the calls answered within
 * the step (platform calls, Skill activations), then records what {@link planReplyEvents} plans.
 */

/** One content block of a reply, as the model endpoint returned it. */
export type ReplyBlock = { type: string } & Record<string, unknown>;

/** A client tool call of the reply. */
export interface ReplyToolUse {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The tokens one reply used (`span.model_request_end`'s `model_usage`). */
export interface ReplyUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A model reply: its blocks, why it stopped and what it used. */
export interface ModelReply {
  content: readonly ReplyBlock[];
  stop_reason: string | null;
  usage: ReplyUsage;
}

/** An event a step plans to append (the shape of the log's new events). */
export interface PlannedEvent {
  type: string;
  body: Record<string, unknown>;
  processed: boolean;
  runnable: boolean;
  idempotencyKey?: string;
  /** A pre-allocated id (a reply's message and thinking, previewed under it; a call answered in the step). */
  id?: string;
  /** The Thread the event belongs to; absent for the primary (ADR 0017). */
  sessionThreadId?: string;
}

/** An event the agent side records: already processed, wakes nothing. */
export function stepEvent(type: string, body: Record<string, unknown>, idempotencyKey: string): PlannedEvent {
  return { type, body, processed: true, runnable: false, idempotencyKey };
}

/** A reply read: what it says, the calls it makes, and whether it was cut short. */
export interface ReadReply {
  /** Cut at max_tokens: a tool call it was still writing is incomplete and dropped. */
  cut: boolean;
  text: Array<{ type: 'text'; text: string }>;
  uses: ReplyToolUse[];
  /** Thinking blocks exactly as returned (signatures intact): the transcript sends them back. */
  thinking: ReplyBlock[];
  /** A cut reply with no complete call, and continuations left this turn: the turn asks again. */
  continues: boolean;
}

/**
 * Reads a reply. A reply cut at max_tokens keeps its text so far; with no complete call to run, the turn
 * continues with another request, at most {@link MAX_TOKENS_CONTINUATIONS} times a turn (`continuations`:
 * how many replies of this turn were cut and continued so far).
 */
export function readReply(
  reply: Pick<ModelReply, 'content' | 'stop_reason'>,
  continuations: number,
): ReadReply {
  const cut = reply.stop_reason === 'max_tokens';
  const content =
    cut && reply.content.at(-1)?.type === 'tool_use' ? reply.content.slice(0, -1) : reply.content;
  const text = content
    .filter((b) => b.type === 'text')
    .map((b) => ({ type: 'text' as const, text: b.text as string }));
  const uses = content.filter((b): b is ReplyBlock & ReplyToolUse => b.type === 'tool_use');
  const thinking = content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  return {
    cut,
    text,
    uses,
    thinking,
    continues: cut && uses.length === 0 && continuations < MAX_TOKENS_CONTINUATIONS,
  };
}

/** Whether a call names one of the Agent's custom tools (its client answers it, or an operator's worker). */
export function isCustomTool(agent: Pick<AgentDefinition, 'tools'>, name: string): boolean {
  return agent.tools.some((t) => t.type === 'custom' && t.name === name);
}

/** An MCP tool offered this turn, as the step needs it to record a call. */
export interface ReplyMcpTool {
  modelName: string;
  serverName: string;
  toolName: string;
  permission: EvaluatedPermission;
}

/** A call answered within the step (a platform call or a Skill activation). */
export interface CallAnswer {
  text: string;
  isError: boolean;
}

/** What {@link planReplyEvents} needs beside the reply. */
export interface ReplyPlan {
  /** The step's key (`[thread:<id>:]turn:<n>:step:<m>`): every event's key is under it. */
  key: string;
  /** A delegate Thread's id: its events carry it (ADR 0017); undefined for the primary. */
  threadId?: string;
  reply: ReadReply;
  usage: ReplyUsage;
  /** The step's `span.model_request_start` id. */
  startId: string;
  /** Pre-allocated ids: the message and thinking (previewed under them), and one per call (`uses`). */
  ids: { message: string; thinking: string; uses: readonly string[] };
  /** Built-in tool permissions and custom tool names. */
  agent: AgentDefinition;
  mcpTools: readonly ReplyMcpTool[];
  /** The `auto` judgements, by call index. */
  judged: ReadonlyMap<number, AutoEvaluation>;
  /** Calls answered within the step, by call index. */
  answered: ReadonlyMap<number, CallAnswer>;
  /** The web tools the endpoint ran (their blocks precede the reply's text). */
  serverEvents: readonly PlannedEvent[];
  /** What the platform calls wrote (for this and other Threads): kept as they are. */
  platformEvents: readonly PlannedEvent[];
}

/**
 * The events one reply appends, in log order: thinking, the web tools the endpoint ran, the text, one
 * call event per tool use, the results of calls answered within the step, what platform calls did, and
 * the `span.model_request_end` that closes the step. A call is, in this order:
 * - answered within the step (a platform call or a Skill activation): an allowed `agent.tool_use`
 *   marked `_answered`, followed by its `agent.tool_result`;
 * - a custom tool: `agent.custom_tool_use`, runnable (an operator's worker may serve it);
 * - an MCP tool: `agent.mcp_tool_use` with the tool's permission, or the `auto` judgement's;
 * - a built-in (sandbox) tool: `agent.tool_use` with the toolset's permission, or the `auto` judgement's;
 *   an allowed one is runnable (the Session's Work runs it).
 */
export function planReplyEvents(plan: ReplyPlan): PlannedEvent[] {
  const { key, reply, ids } = plan;
  const planned: PlannedEvent[] = [
    ...(reply.thinking.length
      ? [{ ...stepEvent('agent.thinking', { _blocks: reply.thinking }, `${key}:thinking`), id: ids.thinking }]
      : []),
    ...plan.serverEvents,
    ...(reply.text.length
      ? [{ ...stepEvent('agent.message', { content: reply.text }, `${key}:message`), id: ids.message }]
      : []),
    ...reply.uses.map((u, i) => callEvent(plan, u, i)),
    ...[...plan.answered].map(([i, answer]) =>
      stepEvent(
        'agent.tool_result',
        {
          tool_use_id: ids.uses[i],
          content: [{ type: 'text', text: answer.text }],
          is_error: answer.isError,
        },
        `${key}:tool_result:${i}`,
      ),
    ),
    ...plan.platformEvents,
    modelRequestEnd(plan),
  ];
  // Every event of the step is the Thread's own, except what a platform call wrote for other Threads.
  const own = (e: PlannedEvent) =>
    plan.threadId && !plan.platformEvents.includes(e) && !e.sessionThreadId
      ? { ...e, sessionThreadId: plan.threadId }
      : e;
  return planned.map(own);
}

/** The event of call `i` of the reply (see {@link planReplyEvents}). */
function callEvent(plan: ReplyPlan, u: ReplyToolUse, i: number): PlannedEvent {
  const key = `${plan.key}:tool_use:${i}`;
  if (plan.answered.has(i))
    return {
      ...stepEvent(
        'agent.tool_use',
        { name: u.name, input: u.input, evaluated_permission: 'allow', _answered: true },
        key,
      ),
      id: plan.ids.uses[i],
    };
  if (isCustomTool(plan.agent, u.name))
    return { ...stepEvent('agent.custom_tool_use', { name: u.name, input: u.input }, key), runnable: true };
  const evaluation = plan.judged.get(i);
  const judgement = evaluation ? { evaluation } : {};
  const mcp = plan.mcpTools.find((t) => t.modelName === u.name);
  if (mcp)
    return stepEvent(
      'agent.mcp_tool_use',
      {
        name: mcp.toolName,
        mcp_server_name: mcp.serverName,
        input: u.input,
        evaluated_permission: evaluation ? autoPermission(evaluation) : mcp.permission,
        ...judgement,
        _model_name: mcp.modelName,
      },
      key,
    );
  const permission = evaluation ? autoPermission(evaluation) : evaluatePermission(plan.agent, u.name);
  return {
    ...stepEvent(
      'agent.tool_use',
      { name: u.name, input: u.input, evaluated_permission: permission, ...judgement },
      key,
    ),
    runnable: permission === 'allow',
  };
}

/** The span that closes a replied step: its usage, and `_stop_reason` when the reply was cut. */
function modelRequestEnd({ key, startId, reply, usage }: ReplyPlan): PlannedEvent {
  return stepEvent(
    'span.model_request_end',
    {
      model_request_start_id: startId,
      is_error: false,
      ...(reply.cut ? { _stop_reason: 'max_tokens' } : {}),
      model_usage: {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      },
    },
    `${key}:model_end`,
  );
}

/** What a recorded step asks of the workflow, with which of its calls already have their results. */
export type ReplyOutcome =
  | { stopReason: 'end_turn' }
  | { stopReason: 'tool_use'; toolUseIds: string[]; mcpToolUseIds?: string[]; answered?: string[] }
  | { stopReason: 'requires_action'; eventIds: string[] };

/**
 * What a replied step asks of the workflow: the decision over its recorded calls (`stepOutcome`), where
 * calls this attempt just recorded (`fresh`) have no result yet; a continued cut reply, and a reply a
 * long-running web tool paused (`pause_turn`) with no call to wait for, ask the model again.
 */
export function replyOutcome(opts: {
  decided: StepDecision;
  fresh: boolean;
  continues: boolean;
  stopReason: string | null;
}): ReplyOutcome {
  const { decided } = opts;
  if (opts.continues) return { stopReason: 'tool_use', toolUseIds: [], answered: [] };
  if (opts.stopReason === 'pause_turn' && decided.stopReason === 'end_turn')
    return { stopReason: 'tool_use', toolUseIds: [], answered: [] };
  return opts.fresh && decided.stopReason === 'tool_use' ? { ...decided, answered: [] } : decided;
}

/** The key every event of one step is under: `[thread:<id>:]turn:<n>:step:<m>` (ADR 0017 for the prefix). */
export function stepKey(ref: { threadId?: string | null; turn: number; step: number }): string {
  return `${threadKeyPrefix(ref.threadId)}turn:${ref.turn}:step:${ref.step}`;
}

/** A recorded event as the step's decisions read it. */
export type RecordedEvent = LogEvent & { idempotencyKey?: string | null };

/**
 * A step's tool calls with the ones the log read under the row lock already answers (`answered`): the
 * workflow then needs no look of its own, since any later result is signalled to it.
 */
export function withAnswered<T extends { stopReason: string; toolUseIds?: string[] }>(
  outcome: T,
  log: readonly Pick<LogEvent, 'toolUseId'>[],
): T {
  if (outcome.stopReason !== 'tool_use') return outcome;
  const ids = new Set(outcome.toolUseIds);
  const answered = log.filter((e) => e.toolUseId && ids.has(e.toolUseId)).map((e) => e.toolUseId!);
  return { ...outcome, answered: [...new Set(answered)] };
}

/**
 * A step already recorded (a retried activity): the same answer as the first time — a continuation when
 * its reply was cut at max_tokens with no complete call and the turn had continuations left.
 */
export function recordedStepOutcome(
  events: readonly RecordedEvent[],
  ref: { threadId?: string | null; turn: number; step: number },
): StepDecision {
  const key = stepKey(ref);
  const turnKey = `${threadKeyPrefix(ref.threadId)}turn:${ref.turn}:`;
  const uses = events.filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`));
  const end = events.find((e) => e.idempotencyKey === `${key}:model_end`);
  if (end?.body._stop_reason === 'max_tokens' && uses.length === 0) {
    const before = events.filter(
      (e) =>
        e.idempotencyKey?.startsWith(turnKey) &&
        e.body._stop_reason === 'max_tokens' &&
        Number(e.seq) < Number(end.seq),
    ).length;
    if (before < MAX_TOKENS_CONTINUATIONS) return { stopReason: 'tool_use', toolUseIds: [] };
  }
  return stepOutcome(uses);
}
