/**
 * Tool calls in a Session's event log (openapi.yaml `SessionEvent`; docs/api-guide.md "Sessions — choices"): which are answered, which still wait for the
 * worker or the client, and which an interrupt (or a turn that ended without them) closed. Pure: the
 * orchestrator decides with it and the API refuses late answers with it.
 */
export interface LogEvent {
  id: string;
  seq: string | number;
  type: string;
  body: Record<string, unknown>;
  /** user.tool_result / user.custom_tool_result: the call it answers. */
  toolUseId?: string | null;
}

export type OpenCalls =
  /** Calls that need the client: an `ask` without a verdict, a custom tool without its result. */
  | { stopReason: 'requires_action'; eventIds: string[] }
  /**
   * Allowed (or confirmed) calls without a result: sandbox calls wait for the worker's user.tool_result;
   * MCP calls (`mcpToolUseIds`) are made by the orchestrator, which records their agent.mcp_tool_result.
   */
  | { stopReason: 'tool_use'; toolUseIds: string[]; mcpToolUseIds?: string[] };

export const INTERRUPTED_TOOL_MESSAGE = 'Tool execution was interrupted before completion. Please retry.';
export const DENIED_BY_POLICY_MESSAGE = 'Permission to use this tool was denied by policy.';
export const DENIED_BY_USER_MESSAGE = 'The user denied this tool call.';

const isCall = (e: LogEvent) =>
  e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use' || e.type === 'agent.mcp_tool_use';

/**
 * Whether this event closes every call still open before it: a `user.interrupt`, or an idle that is not
 * `requires_action` (an interrupted, exhausted or budget-stopped turn leaves no call behind).
 */
export function closesOpenCalls(e: Pick<LogEvent, 'type' | 'body'>): boolean {
  if (e.type === 'user.interrupt') return true;
  if (e.type !== 'session.status_idle') return false;
  return (e.body.stop_reason as { type?: string } | undefined)?.type !== 'requires_action';
}

/** How each call in the log ended, walking it once in order. */
export function callStates(events: LogEvent[]) {
  const answered = new Set<string>();
  const closed = new Set<string>();
  const verdicts = new Map<string, 'allow' | 'deny'>();
  const open: LogEvent[] = [];
  for (const e of events) {
    if (isCall(e)) {
      if (e.type !== 'agent.custom_tool_use' && e.body.evaluated_permission === 'deny') answered.add(e.id);
      else open.push(e);
      continue;
    }
    if (e.type === 'user.tool_confirmation') {
      const target = e.body.tool_use_id as string;
      verdicts.set(target, e.body.result as 'allow' | 'deny');
      if (e.body.result === 'deny') answered.add(target);
    }
    if (e.toolUseId && (e.type === 'user.tool_result' || e.type === 'user.custom_tool_result'))
      answered.add(e.toolUseId);
    if (e.type === 'agent.mcp_tool_result') answered.add(e.body.mcp_tool_use_id as string);
    // Answered by Mango itself (a Skill activation) or run by the model endpoint (web tools).
    if (e.type === 'agent.tool_result') answered.add(e.body.tool_use_id as string);
    if (closesOpenCalls(e)) {
      for (const call of open) if (!answered.has(call.id)) closed.add(call.id);
      open.length = 0;
    }
  }
  return { answered, closed, verdicts, open: open.filter((c) => !answered.has(c.id)) };
}

/** What blocks the next model request, if anything; calls needing the client come first. */
export function openCalls(events: LogEvent[]): OpenCalls | undefined {
  const { open, verdicts } = callStates(events);
  const needsAction: string[] = [];
  const waiting: string[] = [];
  const mcp: string[] = [];
  for (const call of open) {
    const runs = call.type === 'agent.mcp_tool_use' ? mcp : waiting;
    if (call.type === 'agent.custom_tool_use') needsAction.push(call.id);
    else if (call.body.evaluated_permission === 'allow') runs.push(call.id);
    else if (call.body.evaluated_permission === 'ask') {
      const verdict = verdicts.get(call.id);
      if (verdict === undefined) needsAction.push(call.id);
      else if (verdict === 'allow') runs.push(call.id);
    }
  }
  if (needsAction.length) return { stopReason: 'requires_action', eventIds: needsAction };
  if (mcp.length) return { stopReason: 'tool_use', toolUseIds: waiting, mcpToolUseIds: mcp };
  if (waiting.length) return { stopReason: 'tool_use', toolUseIds: waiting };
  return undefined;
}
