import { closesOpenCalls } from '@mango/domain-sessions';
import type { StepOutcome } from '@mango/workflows';

/**
 * The pure rules of the model step's in-activity continuation (ADR 0019): which outcomes may wait for
 * their tool results inside the activity, and what the log says about that wait.
 */

/** Of the activity's start-to-close timeout, the part after which it takes no further step itself. */
export const CONTINUE_WITHIN_TIMEOUT_FRACTION = 0.25;

/**
 * Whether the activity may wait for this outcome's results and run the next step itself: only a step
 * that ended in sandbox tool calls (no MCP call for the workflow to make, no action, budget or end), while
 * steps remain, the wait is on and the activity is young enough that one more step stays well inside its
 * start-to-close timeout.
 */
export function mayContinue(
  outcome: StepOutcome,
  o: { ran: number; maxSteps: number; waitMs: number; elapsedMs: number; timeoutMs: number },
): outcome is Extract<StepOutcome, { stopReason: 'tool_use' }> {
  if (outcome.stopReason !== 'tool_use' || outcome.mcpToolUseIds?.length) return false;
  if (o.waitMs <= 0 || o.ran >= o.maxSteps) return false;
  return !(o.timeoutMs > 0 && o.elapsedMs > o.timeoutMs * CONTINUE_WITHIN_TIMEOUT_FRACTION);
}

/** What the wait reads of one event (a Thread's log, libs/domain/sessions `threadLog`). */
export interface WaitLogEvent {
  type: string;
  seq: string;
  idempotencyKey?: string | null;
  toolUseId?: string | null;
  body: Record<string, unknown>;
}

/** What the log read under the Session's row lock says about the wait for `toolUseIds`. */
export interface ResultsState {
  /** The calls among `toolUseIds` that have their result. */
  answered: string[];
  /**
   * Something after the turn's start closed its open calls (an interrupt, an idle): the activity takes no
   * further step, the workflow decides.
   */
  stopped: boolean;
}

/**
 * Reads a Thread's log for the wait: which of the step's calls have a result, and whether an interrupt
 * (or anything else that closes open calls) was appended after `since` — the turn's own
 * `…turn:<n>:running` key, else the step's start key. Ready to continue: every call answered, not stopped.
 */
export function resultsState(
  events: readonly WaitLogEvent[],
  toolUseIds: readonly string[],
  since: readonly string[],
): ResultsState {
  const ids = new Set(toolUseIds);
  const answered = new Set<string>();
  let from = -1;
  for (const key of since) {
    from = events.findIndex((e) => e.idempotencyKey === key);
    if (from >= 0) break;
  }
  let stopped = false;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.toolUseId && ids.has(e.toolUseId)) answered.add(e.toolUseId);
    if (i > from && closesOpenCalls(e)) stopped = true;
  }
  return { answered: toolUseIds.filter((id) => answered.has(id)), stopped };
}
