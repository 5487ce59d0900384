/**
 * Pure view-model of a Session's event log for the console: lanes per Thread, the transcript grouped by
 * model request, tool calls joined with their results and confirmations, pending approvals, the live
 * status and usage against budget. No DOM, no I/O: table-tested in transcript.spec.ts.
 */

/** A Session event as the API returns it (only the fields the console reads are named). */
export interface ConsoleEvent {
  id: string;
  type: string;
  session_thread_id?: string;
  processed_at?: string | null;
  [field: string]: unknown;
}

export interface MonetaryAmount {
  amount: string;
  currency: string;
}

/** One model request: `span.model_request_start` … `span.model_request_end` and what the model said. */
export interface ModelRequestBlock {
  kind: 'model_request';
  id: string;
  start: ConsoleEvent | undefined;
  end: ConsoleEvent | undefined;
  events: ConsoleEvent[];
}

/** Anything outside a model request (user messages, status changes, tool results, usage). */
export interface EventBlock {
  kind: 'event';
  id: string;
  event: ConsoleEvent;
}

export type TranscriptBlock = ModelRequestBlock | EventBlock;

/** The primary Thread's lane key (events without `session_thread_id`). */
export const PRIMARY = 'primary';

const TOOL_USES = new Set(['agent.tool_use', 'agent.mcp_tool_use', 'agent.custom_tool_use']);
const TOOL_RESULTS = new Set([
  'user.tool_result',
  'agent.tool_result',
  'agent.mcp_tool_result',
  'user.custom_tool_result',
]);

export function isToolUse(e: ConsoleEvent): boolean {
  return TOOL_USES.has(e.type);
}

/** Results and confirmations: shown with the call they answer, not as rows of their own. */
export function answersToolUse(e: ConsoleEvent): boolean {
  return TOOL_RESULTS.has(e.type) || e.type === 'user.tool_confirmation';
}

/** The lane an event belongs to: its Thread, or the primary lane. */
export function laneOf(e: ConsoleEvent, primaryThreadId?: string): string {
  const t = e.session_thread_id;
  return t === undefined || t === primaryThreadId ? PRIMARY : t;
}

/** Lanes in order of first appearance, the primary lane first. */
export function lanes(events: readonly ConsoleEvent[], primaryThreadId?: string): string[] {
  const out = [PRIMARY];
  for (const e of events) {
    const lane = laneOf(e, primaryThreadId);
    if (!out.includes(lane)) out.push(lane);
  }
  return out;
}

/**
 * The transcript of one lane: each `span.model_request_start` opens a block that collects the agent's
 * events up to its `span.model_request_end`; every other event is a block of its own.
 */
export function groupByModelRequest(events: readonly ConsoleEvent[]): TranscriptBlock[] {
  const blocks: TranscriptBlock[] = [];
  let open: ModelRequestBlock | undefined;
  for (const e of events) {
    if (e.type === 'span.model_request_start') {
      open = { kind: 'model_request', id: e.id, start: e, end: undefined, events: [] };
      blocks.push(open);
    } else if (e.type === 'span.model_request_end') {
      const target =
        open && (e.model_request_start_id === undefined || e.model_request_start_id === open.id)
          ? open
          : blocks.find(
              (b): b is ModelRequestBlock => b.kind === 'model_request' && b.id === e.model_request_start_id,
            );
      if (target) target.end = e;
      else blocks.push({ kind: 'event', id: e.id, event: e });
      open = undefined;
    } else if (open && e.type.startsWith('agent.')) {
      open.events.push(e);
    } else {
      blocks.push({ kind: 'event', id: e.id, event: e });
    }
  }
  return blocks;
}

export interface ToolCallState {
  result?: ConsoleEvent;
  confirmation?: ConsoleEvent;
}

/** Results and confirmations by the id of the tool use they answer. */
export function toolCallStates(events: readonly ConsoleEvent[]): Map<string, ToolCallState> {
  const out = new Map<string, ToolCallState>();
  const at = (id: unknown) => {
    const key = String(id);
    let s = out.get(key);
    if (!s) out.set(key, (s = {}));
    return s;
  };
  for (const e of events) {
    if (e.type === 'user.tool_confirmation') at(e.tool_use_id).confirmation = e;
    // agent.tool_result: a Skill activation or a web tool the endpoint ran (docs/api-guide.md).
    else if (
      e.type === 'user.tool_result' ||
      e.type === 'agent.tool_result' ||
      e.type === 'agent.mcp_tool_result'
    )
      at(e.tool_use_id ?? e.mcp_tool_use_id).result = e;
    else if (e.type === 'user.custom_tool_result') at(e.custom_tool_use_id).result = e;
  }
  return out;
}

/**
 * Tool calls waiting for an answer from a person: `evaluated_permission: "ask"`, no confirmation and no
 * result yet, and neither interrupted nor ended since (primary and relayed child Threads alike).
 */
export function pendingApprovals(events: readonly ConsoleEvent[]): ConsoleEvent[] {
  const states = toolCallStates(events);
  const pending: ConsoleEvent[] = [];
  for (const e of events) {
    if (isToolUse(e) && e.evaluated_permission === 'ask') {
      const s = states.get(e.id);
      if (!s?.confirmation && !s?.result) pending.push(e);
    } else if (
      e.type === 'user.interrupt' ||
      e.type === 'session.status_terminated' ||
      e.type === 'session.deleted'
    ) {
      pending.length = 0;
    }
  }
  return pending;
}

export type LiveStatus = 'idle' | 'running' | 'awaiting approval' | 'rescheduling' | 'terminated';

/** The status line: the Session's status, refined by the events seen since it was read. */
export function liveStatus(initial: string, events: readonly ConsoleEvent[]): LiveStatus {
  let status = initial as LiveStatus;
  for (const e of events) {
    if (e.type === 'session.status_running') status = 'running';
    else if (e.type === 'session.status_idle') status = 'idle';
    else if (e.type === 'session.status_rescheduled') status = 'rescheduling';
    else if (e.type === 'session.status_terminated' || e.type === 'session.deleted') status = 'terminated';
  }
  if (status !== 'terminated' && pendingApprovals(events).length > 0) return 'awaiting approval';
  return status;
}

export interface UsageView {
  inputTokens: number;
  outputTokens: number;
  cost: MonetaryAmount | null;
  budget: MonetaryAmount | null;
  /** cost / budget in [0, 1+], or null without a budget or a priced model. */
  fraction: number | null;
}

type UsageLike = Record<string, unknown> | null | undefined;
type BudgetLike = { max_list_cost?: MonetaryAmount } | null | undefined;

/**
 * Usage against budget. Tokens: the sum of every model request's `model_usage` in the log when the log
 * has any (live: it grows with each request), else the Session's cumulative usage. Cost and budget: the
 * Session's (the server prices usage), overridden by a later `session.usage` / `session.updated` event.
 */
export function usageView(
  usage: UsageLike,
  budget: BudgetLike,
  events: readonly ConsoleEvent[] = [],
): UsageView {
  let u = usage ?? {};
  let b: BudgetLike = budget ?? null;
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const inOf = (x: Record<string, unknown>) =>
    num(x.input_tokens) + num(x.cache_creation_input_tokens) + num(x.cache_read_input_tokens);
  let requests = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const e of events) {
    if (e.type === 'span.model_request_end' && e.model_usage && typeof e.model_usage === 'object') {
      const mu = e.model_usage as Record<string, unknown>;
      requests++;
      inputTokens += inOf(mu);
      outputTokens += num(mu.output_tokens);
    } else if (e.type === 'session.usage') {
      u = (e.usage as UsageLike) ?? u;
      if ('budget' in e) b = e.budget as BudgetLike;
    } else if (e.type === 'session.updated' && e.budget !== undefined) {
      b = e.budget as BudgetLike;
    }
  }
  const cost = (u.list_cost as MonetaryAmount | null | undefined) ?? null;
  const max = b?.max_list_cost ?? null;
  const fraction = cost && max && Number(max.amount) > 0 ? Number(cost.amount) / Number(max.amount) : null;
  return {
    inputTokens: requests > 0 ? inputTokens : inOf(u),
    outputTokens: requests > 0 ? outputTokens : num(u.output_tokens),
    cost,
    budget: max,
    fraction,
  };
}

/** `"2500"` USD minor units → `$25.00`. */
export function formatMoney(m: MonetaryAmount | null | undefined): string {
  if (!m) return '—';
  const cents = BigInt(m.amount);
  const whole = cents / 100n;
  const frac = (cents % 100n).toString().padStart(2, '0');
  return `${m.currency === 'USD' ? '$' : `${m.currency} `}${whole}.${frac}`;
}

/** Text of a content array (text blocks joined; other blocks named). */
export function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string }) =>
      b?.type === 'text' ? (b.text ?? '') : `[${b?.type ?? 'block'}]`,
    )
    .join('');
}

/** An API key shown as its hint only: prefix and last four characters, never the secret. */
export function keyHint(key: string): string {
  const m = /^(mango_[a-z]{2}_)/.exec(key);
  return `${m ? m[1] : ''}…${key.slice(-4)}`;
}

/** Merges newly streamed events into a history, once each, in order of arrival. */
export function mergeEvents(history: readonly ConsoleEvent[], more: readonly ConsoleEvent[]): ConsoleEvent[] {
  const seen = new Set(history.map((e) => e.id));
  const out = history.slice();
  for (const e of more) {
    if (!seen.has(e.id)) {
      seen.add(e.id);
      out.push(e);
    }
  }
  return out;
}
