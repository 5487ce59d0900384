/**
 * What each stream of a Session shows (ADR 0017 "What each stream shows"): one rule for the history
 * reads and the SSE streams of the primary Thread, of a child Thread, and of the Session's Work token.
 * All of a Session's events live in its one log; `session_thread_id` (null = the primary) says which
 * Thread an event belongs to. Pure and workflow-safe: imports only the event-kind vocabulary.
 *
 * - A child Thread's stream shows its own events (and `session.deleted`, which ends every stream).
 * - The primary's stream shows its own events, every Thread's lifecycle (`session.thread_*`), the
 *   cross-thread messages (its own `agent.thread_message_*`: the sender's side of a request, the
 *   receiver's side of a report; a child's side of the same exchange stays on the child), and the
 *   child tool calls whose answer needs a client — an `ask` `agent.tool_use` / `agent.mcp_tool_use` and every `agent.custom_tool_use`
 *   (hosted §3.4.4, cross-posted with their `session_thread_id`) — with the client's answers to them.
 * - The Work token's stream shows what the primary's does plus every Thread's sandbox calls and what
 *   settles them (the worker serves the whole Session's one Work activation, ADR 0008).
 */
import { isThreadLifecycleKind } from './event-kinds';

/** The stream being read. */
export type ThreadStream =
  | { kind: 'thread'; threadId: string; primary: boolean }
  /** A Session's Work token (the self-hosted worker). */
  | { kind: 'work' };

/** What the rule reads of an event. */
export interface VisibilityEvent {
  type: string;
  /** `session_thread_id` of the event; null or undefined for the primary Thread's own events. */
  sessionThreadId?: string | null;
  /** `evaluated_permission` of a tool call (`allow` | `ask` | `deny`), when it has one. */
  evaluatedPermission?: string | null;
}

/** Sandbox calls and what settles them: the worker runs every Thread's (ADR 0017 "Sandbox calls"). */
const SANDBOX_KINDS = new Set([
  'agent.tool_use',
  'user.tool_confirmation',
  'user.tool_result',
  'user.interrupt',
]);

/** Client answers to cross-posted calls: echoed where the client sent them, the primary's stream. */
const CLIENT_ANSWERS = new Set(['user.tool_confirmation', 'user.custom_tool_result']);

/** A child Thread's tool call that waits on a client (an `ask` confirmation or a custom tool result). */
export function needsClientAnswer(event: VisibilityEvent): boolean {
  if (event.type === 'agent.custom_tool_use') return true;
  return (
    (event.type === 'agent.tool_use' || event.type === 'agent.mcp_tool_use') &&
    event.evaluatedPermission === 'ask'
  );
}

/** Whether `event` appears on `stream` (history read and SSE alike). */
export function visibleOn(stream: ThreadStream, event: VisibilityEvent): boolean {
  const owner = event.sessionThreadId ?? null;
  if (event.type === 'session.deleted') return true;
  if (stream.kind === 'work') return onPrimary(event, owner) || SANDBOX_KINDS.has(event.type);
  if (!stream.primary) return owner === stream.threadId;
  return owner === stream.threadId || onPrimary(event, owner);
}

function onPrimary(event: VisibilityEvent, owner: string | null): boolean {
  if (owner === null) return true;
  return isThreadLifecycleKind(event.type) || needsClientAnswer(event) || CLIENT_ANSWERS.has(event.type);
}
