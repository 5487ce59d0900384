/**
 * The `auto` permission policy (docs/api-guide.md "The auto permission policy"): before a call whose
 * policy is `auto` runs, one bounded model request judges it against the Agent's instructions and the
 * call. The decision is `allow` or `ask` — never a silent deny — and a failed, slow or unparsable
 * judgement is `ask`. Pure: the request this module builds and the parsing of its answer; the request is
 * made by the orchestrator (libs/orchestration/activities auto-permission.ts).
 */

/** Bounds of the judgement request (documented; the orchestrator may shorten the timeout). */
export const AUTO_JUDGE_LIMITS = {
  maxTokens: 256,
  timeoutMs: 15_000,
  /** The Agent's instructions and the call's input are cut to this many characters in the prompt. */
  maxInstructionChars: 8_000,
  maxInputChars: 8_000,
  /** The reason kept on the event. */
  maxReasonChars: 500,
} as const;

/** The fixed system prompt of every judgement (stated verbatim in docs/api-guide.md). */
export const AUTO_JUDGE_SYSTEM = [
  'You review one tool call an AI agent wants to make, before it runs.',
  "Decide whether the call is clearly within the agent's instructions and low risk (allow), or whether a human should confirm it first (ask).",
  'Answer "ask" when the call could be destructive, irreversible, exfiltrate data, reach beyond the task, or when you are unsure.',
  'Reply with exactly one JSON object and nothing else: {"decision": "allow" | "ask", "reason": "<one short sentence>"}',
].join('\n');

/** What the judge is shown about the call. */
export interface AutoCall {
  /** `sandbox` (`agent.tool_use`) or `mcp` (`agent.mcp_tool_use`). */
  kind: 'sandbox' | 'mcp';
  /** The tool's name (for MCP: its name on the server). */
  name: string;
  mcpServerName?: string;
  input: unknown;
}

/** The one user message of a judgement: the Agent's instructions and the call, in a fixed layout. */
export function autoJudgeMessage(instructions: string | null | undefined, call: AutoCall): string {
  const text = (instructions ?? '').trim() || '(none)';
  const input = JSON.stringify(call.input ?? {});
  const tool =
    call.kind === 'mcp'
      ? `${call.name} (MCP server "${call.mcpServerName ?? ''}")`
      : `${call.name} (sandbox tool)`;
  return [
    '<agent_instructions>',
    cut(text, AUTO_JUDGE_LIMITS.maxInstructionChars),
    '</agent_instructions>',
    '<tool_call>',
    `tool: ${tool}`,
    `input: ${cut(input, AUTO_JUDGE_LIMITS.maxInputChars)}`,
    '</tool_call>',
  ].join('\n');
}

/** How an `auto` call was decided: the hosted `evaluation` shape, plus Mango's `reason` text. */
export interface AutoEvaluation {
  type: 'auto';
  evaluated_permission: { type: 'allow' } | { type: 'ask'; reason_code: AutoReasonCode };
  /** The judge's one-sentence reason, or why there was no usable judgement. */
  reason: string;
}

/**
 * `judged_ask`: the judge answered ask; `judge_failed`: the request failed or timed out;
 * `judge_unparsable`: the answer was not the JSON asked for.
 */
export type AutoReasonCode = 'judged_ask' | 'judge_failed' | 'judge_unparsable';

/**
 * The decision from the judge's reply text: exactly a JSON object `{decision, reason}` (surrounding
 * whitespace and a ```json fence are tolerated); anything else is `ask` with `judge_unparsable`. Never deny.
 */
export function parseAutoJudgement(text: string): AutoEvaluation {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '')
    .trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return unparsable('the judgement was not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return unparsable('the judgement was not a JSON object');
  const { decision, reason } = parsed as Record<string, unknown>;
  const why =
    typeof reason === 'string' && reason.trim() ? cut(reason.trim(), AUTO_JUDGE_LIMITS.maxReasonChars) : '';
  if (decision === 'allow')
    return { type: 'auto', evaluated_permission: { type: 'allow' }, reason: why || '(no reason given)' };
  if (decision === 'ask')
    return {
      type: 'auto',
      evaluated_permission: { type: 'ask', reason_code: 'judged_ask' },
      reason: why || '(no reason given)',
    };
  return unparsable(
    `the judgement's decision was ${JSON.stringify(decision ?? null).slice(0, 40)}, not "allow" or "ask"`,
  );
}

/** A judgement that could not be had (error, timeout, no endpoint): ask. */
export function failedAutoJudgement(reason: string): AutoEvaluation {
  return {
    type: 'auto',
    evaluated_permission: { type: 'ask', reason_code: 'judge_failed' },
    reason: cut(reason, AUTO_JUDGE_LIMITS.maxReasonChars),
  };
}

/** The `evaluated_permission` an evaluation stands for. */
export function autoPermission(e: AutoEvaluation): 'allow' | 'ask' {
  return e.evaluated_permission.type;
}

function unparsable(reason: string): AutoEvaluation {
  return { type: 'auto', evaluated_permission: { type: 'ask', reason_code: 'judge_unparsable' }, reason };
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
