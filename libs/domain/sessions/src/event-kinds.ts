/**
 * The vocabulary of Session event kinds: which kinds are runnable, wake the Session workflow, settle a
 * pending action, change the budget. One place answers these questions for the API (admission), the
 * Session log (outbox rows, Work), the outbox relay and the workflow. Pure and workflow-safe: this file
 * imports nothing, so the Temporal workflow bundle may use it (docs/architecture.md, ADR 0005).
 */

/** Every event type the Session log stores (openapi.yaml `SessionEvent`). */
export const SESSION_EVENT_TYPES = [
  'user.message',
  'user.interrupt',
  'user.tool_result',
  'user.tool_confirmation',
  'user.custom_tool_result',
  'user.define_outcome',
  'agent.message',
  'agent.tool_use',
  'agent.tool_result',
  'agent.custom_tool_use',
  'agent.mcp_tool_use',
  'agent.mcp_tool_result',
  'agent.thread_context_compacted',
  'session.status_running',
  'session.status_idle',
  'session.status_rescheduled',
  'session.status_terminated',
  'session.error',
  'session.updated',
  'session.deleted',
  'session.usage',
  'span.model_request_start',
  'span.model_request_end',
  'span.outcome_evaluation_start',
  'span.outcome_evaluation_ongoing',
  'span.outcome_evaluation_end',
] as const;

export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/**
 * Thread lifecycle event types (hosted §3.4.3; ADR 0017). Appended by the multi-agent orchestration
 * with the Thread's `session_thread_id`; they join {@link SESSION_EVENT_TYPES} (and openapi.yaml
 * `SessionEvent`) when the orchestration appends them.
 */
export const THREAD_LIFECYCLE_EVENT_TYPES = [
  'session.thread_created',
  'session.thread_status_running',
  'session.thread_status_idle',
  'session.thread_status_rescheduled',
  'session.thread_status_terminated',
] as const;

/** Cross-thread message event types: the sender's side and the receiver's side (ADR 0017). */
export const THREAD_MESSAGE_EVENT_TYPES = [
  'agent.thread_message_sent',
  'agent.thread_message_received',
] as const;

export function isThreadLifecycleKind(kind: string): boolean {
  return (THREAD_LIFECYCLE_EVENT_TYPES as readonly string[]).includes(kind);
}

export function isThreadMessageKind(kind: string): boolean {
  return (THREAD_MESSAGE_EVENT_TYPES as readonly string[]).includes(kind);
}

/**
 * The outbox kind of a Thread archive request (`POST …/threads/{id}/archive`, ADR 0017): the durable
 * intent the orchestration finishes. Never an event type: the relay finishes the archive in its dispatch
 * transaction and signals the Thread's workflow, which stops.
 */
export const THREAD_ARCHIVE_REQUESTED = 'session.thread_archive_requested';

/**
 * The outbox kind of a `session.updated` that changed or removed the budget: it resumes a turn paused
 * at the budget gate. Never an event type of its own.
 */
export const BUDGET_CHANGED = 'session.budget_changed';

/**
 * Every kind an outbox row or a workflow signal may carry: the event types plus {@link BUDGET_CHANGED} and
 * {@link THREAD_ARCHIVE_REQUESTED}.
 */
export const SESSION_EVENT_KINDS: readonly string[] = [
  ...SESSION_EVENT_TYPES,
  ...THREAD_LIFECYCLE_EVENT_TYPES,
  ...THREAD_MESSAGE_EVENT_TYPES,
  BUDGET_CHANGED,
  THREAD_ARCHIVE_REQUESTED,
];

/**
 * Client input that lets the agent continue, and so needs the Session's worker and starts a turn:
 * messages, tool confirmations, custom tool results, a defined outcome (work starts on receipt).
 */
export function isRunnableKind(kind: string): boolean {
  return (
    kind === 'user.message' ||
    kind === 'user.tool_confirmation' ||
    kind === 'user.custom_tool_result' ||
    kind === 'user.define_outcome'
  );
}

/**
 * Input that starts (or queues) a turn of the Thread it is appended to: runnable client input, and a
 * cross-thread message received (a delegate's report on the primary, the coordinator's message on a
 * delegate, ADR 0017).
 */
export function startsTurn(kind: string): boolean {
  return isRunnableKind(kind) || kind === 'agent.thread_message_received';
}

/**
 * Events accepted while a Session is paused at its budget ("settle" events, docs/api-guide.md
 * "Sessions — choices"): they answer or stop what is pending, never start new work.
 */
export function settlesPendingAction(kind: string): boolean {
  return (
    kind === 'user.tool_confirmation' ||
    kind === 'user.tool_result' ||
    kind === 'user.custom_tool_result' ||
    kind === 'user.interrupt'
  );
}

/** The outbox kind that marks a budget change (a `session.updated` carrying `budget`). */
export function changesBudget(kind: string): boolean {
  return kind === BUDGET_CHANGED;
}

/** What a kind does to a running Session workflow when it is signalled. */
export type WorkflowWake =
  /** Starts (or queues) the next turn. */
  | 'turn'
  /** Starts (or queues) the next turn, and turns on the outcome loop (`user.define_outcome`). */
  | 'outcome'
  /** Answers a sandbox tool call the turn waits on. */
  | 'tool_result'
  /** Cancels the running turn. */
  | 'interrupt'
  /** Resumes a turn paused at the budget gate. */
  | 'budget'
  /** A worker's Fail terminated the Session: the workflow stops. */
  | 'terminate'
  /** The Thread's archive was finished: its workflow stops (child Threads only, ADR 0017). */
  | 'archive';

/** How a kind wakes the Session workflow, or `undefined` when it does not (no outbox row, no signal). */
export function workflowWake(kind: string): WorkflowWake | undefined {
  if (kind === 'user.define_outcome') return 'outcome';
  if (startsTurn(kind)) return 'turn';
  switch (kind) {
    case 'user.tool_result':
      return 'tool_result';
    case 'user.interrupt':
      return 'interrupt';
    case BUDGET_CHANGED:
      return 'budget';
    case 'session.status_terminated':
      return 'terminate';
    case THREAD_ARCHIVE_REQUESTED:
      return 'archive';
    default:
      return undefined;
  }
}

/** Kinds the outbox relay signals to the Session workflow. */
export function wakesWorkflow(kind: string): boolean {
  return workflowWake(kind) !== undefined;
}
