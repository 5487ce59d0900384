import { listCost, MonetaryAmount, PriceTable, TokenUsage } from './pricing';

/**
 * The pure decisions of one model step (ADR 0004): the Session's
 * cumulative usage after a response, and what the step asks the workflow to do next. The orchestrator's
 * model-step activity does the I/O around them.
 */

/** The Session's cumulative usage (`sessions.usage`): tokens, list cost, active seconds. */
export type SessionUsage = Record<string, unknown> &
  TokenUsage & {
    list_cost?: MonetaryAmount | null;
    active_seconds?: number;
  };

/** Cumulative usage after one model response, with its list cost when the model is priced. */
export function addUsage(
  model: string,
  usage: SessionUsage,
  add: TokenUsage,
  prices: PriceTable,
): SessionUsage {
  const next: SessionUsage = {
    ...usage,
    input_tokens: (usage.input_tokens ?? 0) + (add.input_tokens ?? 0),
    output_tokens: (usage.output_tokens ?? 0) + (add.output_tokens ?? 0),
    cache_read_input_tokens: (usage.cache_read_input_tokens ?? 0) + (add.cache_read_input_tokens ?? 0),
    cache_creation_input_tokens:
      (usage.cache_creation_input_tokens ?? 0) + (add.cache_creation_input_tokens ?? 0),
  };
  const tools = addServerToolUse(usage.server_tool_use, add.server_tool_use);
  if (tools) next.server_tool_use = tools;
  next.list_cost = listCost(model, next, prices);
  return next;
}

/** Sums the server tool counts; undefined while neither side has any (the key stays absent). */
function addServerToolUse(
  a: TokenUsage['server_tool_use'],
  b: TokenUsage['server_tool_use'],
): TokenUsage['server_tool_use'] {
  if (!a && !b) return a;
  return {
    web_search_requests: (a?.web_search_requests ?? 0) + (b?.web_search_requests ?? 0),
    web_fetch_requests: (a?.web_fetch_requests ?? 0) + (b?.web_fetch_requests ?? 0),
  };
}

/** The list cost a response added, in USD (the change in the cumulative cost; 0 when unpriced). */
export function addedListCostUsd(before: SessionUsage, after: SessionUsage): number {
  if (!after.list_cost) return 0;
  const cents = Number(after.list_cost.amount) - Number(before.list_cost?.amount ?? 0);
  return Math.max(0, cents) / 100;
}

/** A tool call the step appended (its event id, type and body). */
export interface StepToolUse {
  id: string;
  type: string;
  body: Record<string, unknown>;
}

/** What a model step asks of the workflow (the workflow's `StepOutcome`, minus the budget gate). */
export type StepDecision =
  | { stopReason: 'end_turn' }
  | { stopReason: 'tool_use'; toolUseIds: string[]; mcpToolUseIds?: string[] }
  | { stopReason: 'requires_action'; eventIds: string[] };

/**
 * What a model step asks for, from the tool calls it appended: a confirmation for custom tools and asked
 * calls (the turn idles requires_action), else sandbox runs and MCP calls for allowed ones; only denied
 * calls go straight back to the model; no call ends the turn.
 */
export function stepOutcome(uses: readonly StepToolUse[]): StepDecision {
  const ask = uses
    .filter((u) => u.type === 'agent.custom_tool_use' || u.body.evaluated_permission === 'ask')
    .map((u) => u.id);
  if (ask.length) return { stopReason: 'requires_action', eventIds: ask };
  // Calls answered within the step (a Skill activation: `_answered`) run nowhere else.
  const allowed = uses.filter((u) => u.body.evaluated_permission === 'allow' && u.body._answered !== true);
  const run = allowed.filter((u) => u.type === 'agent.tool_use').map((u) => u.id);
  const mcp = allowed.filter((u) => u.type === 'agent.mcp_tool_use').map((u) => u.id);
  if (mcp.length) return { stopReason: 'tool_use', toolUseIds: run, mcpToolUseIds: mcp };
  if (run.length) return { stopReason: 'tool_use', toolUseIds: run };
  // Only denied or answered calls: their results are in the transcript; the model answers next step.
  return uses.length ? { stopReason: 'tool_use', toolUseIds: [] } : { stopReason: 'end_turn' };
}
