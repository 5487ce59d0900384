/**
 * The item runner's report of one tool execution (ADR 0018): the runner has no network but the Work API
 * socket, so it cannot export spans itself. It writes this report into its structured output line
 * `tool call finished` (the container's stdout, which only the supervisor reads), and the supervisor turns
 * it into a `mango.tool_use <name>` span under its `mango.environment.work` span and a
 * `mango_tool_execution_duration_seconds` observation. Ids, names, timing and the outcome only: never the
 * tool's input or output.
 */
export type ToolOutcome = 'ok' | 'error' | 'interrupted';
export type ToolKind = 'sandbox' | 'custom';

export interface ToolReport {
  tool: string;
  tool_use_id: string;
  tool_kind: ToolKind;
  outcome: ToolOutcome;
  /** Wall clock (epoch ms) when the tool started running. */
  started_at: number;
  duration_ms: number;
}

/** The message of the runner's line that carries a report. */
export const TOOL_REPORT_MSG = 'tool call finished';

/** The sandbox tools the runner runs (`agent_toolset_20260401`): the only sandbox names a report may carry. */
export const SANDBOX_TOOL_NAMES: ReadonlySet<string> = new Set([
  'bash',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
]);

const OUTCOMES: ReadonlySet<string> = new Set(['ok', 'error', 'interrupted']);
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** A tool call is bounded well below this (the tool timeout is 2 minutes; a drained call 30 s more). */
const MAX_DURATION_MS = 24 * 3600_000;

/**
 * The report in one output line of the item runner, or undefined when the line is not a well-formed
 * report. The sandbox could write to the same stream, so nothing is trusted: the tool name must be one the
 * worker serves (a sandbox tool or one of `customTools`), ids are bounded, the outcome is one of three and
 * the timing is finite (the caller clamps it into its own activation window).
 */
export function parseToolReport(
  line: string,
  customTools: ReadonlySet<string> = new Set(),
): ToolReport | undefined {
  if (!line.includes(TOOL_REPORT_MSG)) return undefined;
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    o = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (o.msg !== TOOL_REPORT_MSG) return undefined;
  const { tool, tool_use_id, tool_kind, outcome, started_at, duration_ms } = o;
  if (typeof tool !== 'string' || typeof tool_use_id !== 'string' || !ID.test(tool_use_id)) return undefined;
  if (
    tool_kind === 'sandbox' ? !SANDBOX_TOOL_NAMES.has(tool) : tool_kind !== 'custom' || !customTools.has(tool)
  )
    return undefined;
  if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) return undefined;
  if (typeof started_at !== 'number' || !Number.isFinite(started_at) || started_at <= 0) return undefined;
  if (typeof duration_ms !== 'number' || !(duration_ms >= 0 && duration_ms <= MAX_DURATION_MS))
    return undefined;
  return {
    tool,
    tool_use_id,
    tool_kind: tool_kind as ToolKind,
    outcome: outcome as ToolOutcome,
    started_at,
    duration_ms,
  };
}

/**
 * The report's execution window clamped into the window of the item that reported it (`since`: the Ack,
 * or the adoption of a container a restarted supervisor serves; `now`: when the line arrived): a report
 * cannot start before its item or end in the future. Epoch ms.
 */
export function toolReportWindow(
  report: Pick<ToolReport, 'started_at' | 'duration_ms'>,
  since: number,
  now: number,
): { start: number; end: number } {
  const start = Math.min(Math.max(report.started_at, since), now);
  return { start, end: Math.min(start + report.duration_ms, now) };
}
