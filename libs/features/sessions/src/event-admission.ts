import { DomainError, ErrorCode, invalidRequest, permissionDenied } from '@mango/domain-kernel';
import { ClientEvent, settlesPendingAction } from '@mango/domain-sessions';

/**
 * The event admission rules of `POST /v1/sessions/{id}/events` and `initial_events` that need no
 * database (docs/api-guide.md "Sessions — choices"): how many events a request may carry, who may post
 * what, what a budget pause accepts, and what an answering event answers. The rules that read the log
 * (answered once, closed calls, permissions) run in `SendEvents` (send-events.usecase.ts) on the locked Session.
 */

/** 413 for a request carrying more events than this server admits at once (after the shape checks). */
export function checkEventCount(list: unknown, field: string, limit: number): void {
  if (Array.isArray(list) && list.length > limit)
    throw new DomainError(
      ErrorCode.TooLarge,
      `${field} carries ${list.length} events; this server accepts at most ${limit} per request (MANGO_MAX_EVENTS_PER_REQUEST)`,
    );
}

/**
 * A Workspace key sends everything but `user.tool_result`; the Session's Work token sends only tool
 * results: `user.tool_result`, and `user.custom_tool_result` for operator custom tools (docs/operator-guide.md
 * "Operator custom tools"). Both are then checked against its own Session and live lease.
 */
export function checkPoster(fromWorker: boolean, events: readonly ClientEvent[]): void {
  for (const e of events) {
    if (fromWorker && e.type !== 'user.tool_result' && e.type !== 'user.custom_tool_result')
      throw permissionDenied('a Work token may only post user.tool_result and user.custom_tool_result');
    if (!fromWorker && e.type === 'user.tool_result')
      throw permissionDenied("user.tool_result is posted by the Session's Work token");
  }
}

/** At a budget pause only settle events are accepted (tool confirmations and results, interrupts). */
export function checkBudgetPause(paused: boolean, events: readonly ClientEvent[]): void {
  if (!paused) return;
  const refused = events.find((e) => !settlesPendingAction(e.type));
  if (refused)
    throw invalidRequest(
      `the session reached its budget; ${refused.type} is not accepted until the budget is raised or removed (only tool confirmations, tool results, custom tool results and interrupts are)`,
    );
}

/** What an answering event answers. */
export interface Answer {
  /** The event id of the call it answers. */
  targetId: string;
  /** The call's event type (a confirmation also answers an MCP call that asked). */
  targetType: 'agent.tool_use' | 'agent.custom_tool_use';
  /** A confirmation answers only a call that asked. */
  needsAsk: boolean;
  /** How "once" is enforced: an idempotency key (confirmations), else the tool_use_id column. */
  key: string | undefined;
  /** The body compared on a retry. */
  body: Record<string, unknown>;
}

/**
 * What an answering event answers: the call it targets, how "once" is enforced (the tool_use_id column for
 * results, an idempotency key for confirmations), and the body compared on a retry. Undefined for input
 * that answers nothing (messages, interrupts).
 */
export function answerOf(e: ClientEvent): Answer | undefined {
  // The echoed Thread id is checked against the call's, never part of the answer's body.
  const {
    type: _type,
    session_thread_id: _thread,
    ...body
  } = e as ClientEvent & { session_thread_id?: string };
  switch (e.type) {
    case 'user.tool_result':
      return { targetId: e.tool_use_id, targetType: 'agent.tool_use', needsAsk: false, key: undefined, body };
    case 'user.custom_tool_result':
      return {
        targetId: e.custom_tool_use_id,
        targetType: 'agent.custom_tool_use',
        needsAsk: false,
        key: undefined,
        body,
      };
    case 'user.tool_confirmation':
      return {
        targetId: e.tool_use_id,
        targetType: 'agent.tool_use',
        needsAsk: true,
        key: `confirmation:${e.tool_use_id}`,
        body,
      };
    default:
      return undefined;
  }
}

/** The event types an answer may target: a confirmation answers a sandbox or an MCP call that asked. */
export function answerTargetTypes(answer: Answer): string[] {
  return answer.needsAsk ? ['agent.tool_use', 'agent.mcp_tool_use'] : [answer.targetType];
}

/** Whether the found event is a call this answer may answer (a confirmation needs a call that asked). */
/**
 * Calls Mango answered itself (a Skill activation) or the model endpoint ran (web tools): they take no
 * answer from a client or a worker (docs/api-guide.md "What the model sees").
 */
export function answeredByPlatform(target: { body: Record<string, unknown> }): boolean {
  return target.body._answered === true || typeof target.body._server_tool_use_id === 'string';
}

export function isAnswerable(answer: Answer, target: { body: Record<string, unknown> } | null): boolean {
  if (!target || answeredByPlatform(target)) return false;
  return !(answer.needsAsk && target.body.evaluated_permission !== 'ask');
}
