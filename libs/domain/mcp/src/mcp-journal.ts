/**
 * The MCP call journal (one row per `agent.mcp_tool_use`): the intent is durable before the request
 * leaves, the result after it returns. What an orchestrator does with a call depends only on the row.
 */
export interface McpJournalRow {
  /** Set when the intent was recorded (before the request). */
  intentAt: string | null;
  /** Set when the result (or an error result) was recorded. */
  resultAt: string | null;
}

export type McpCallDecision =
  /** No intent yet: record it, then send the request. */
  | 'send'
  /** Intent without result: an earlier attempt may have reached the server — never resend. */
  | 'outcome_unknown'
  /** Already has its result (and its one `agent.mcp_tool_result`): nothing to do. */
  | 'done';

export function mcpCallDecision(row: McpJournalRow | null): McpCallDecision {
  if (!row || !row.intentAt) return 'send';
  if (!row.resultAt) return 'outcome_unknown';
  return 'done';
}

export const MCP_OUTCOME_UNKNOWN_MESSAGE =
  'The outcome of this MCP tool call is unknown: the orchestrator stopped while the request was in flight, ' +
  'and the call is not sent again automatically because it may already have taken effect. Check the ' +
  "server's state before retrying.";
