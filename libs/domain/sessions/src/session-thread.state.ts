import type { SessionStatus } from './session-status.state';

/**
 * The Thread status state machine (openapi.yaml `SessionThread.status`, ADR 0017): which event moves
 * which Thread's status, when a Thread may be archived, whether it accepts input, and the Session-level
 * rule "the Session runs while any Thread runs". Pure and exhaustive, like `session-status.state.ts`;
 * the Thread repository (`libs/persistence/src/session-thread.repository.ts`) and the Session log are
 * the only writers of `session_threads.status`, and they write what this file answers.
 *
 *            runnable input / thread_status_running      thread_status_rescheduled
 *    idle ─────────────────────────────────────────▶ running ◀──────────────────▶ rescheduling
 *      ▲                                                │      thread_status_running
 *      └──────────────── thread_status_idle ────────────┘ (also from rescheduling)
 *
 *    thread_status_terminated, session.status_terminated (a worker's Fail ends every Thread):
 *    any status → terminated (absorbing).
 *
 * A Thread's own status events are `session.thread_status_*` carrying its `session_thread_id`. The
 * primary Thread is owned by the Session workflow, whose `session.status_*` events are also the
 * primary's own (ADR 0017 "Orchestration"): {@link threadStatusEvent} says which events a Thread's
 * machine sees. Workflow-safe: imports nothing that does I/O.
 */

export const THREAD_STATUSES = ['idle', 'running', 'rescheduling', 'terminated'] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** A new Thread (the primary with its Session, a delegate at its first `send_to_agent`) is idle. */
export const INITIAL_THREAD_STATUS: ThreadStatus = 'idle';

/** What the machine looks at in an event the Thread sees: its type, and whether it is runnable input. */
export interface ThreadStatusEvent {
  type: string;
  /** Runnable input for this Thread (a message, a confirmation, a custom tool result, a report). */
  runnable?: boolean;
}

function isThreadStatus(s: string): s is ThreadStatus {
  return (THREAD_STATUSES as readonly string[]).includes(s);
}

/** The status after `event` is seen by a Thread in `status`. */
export function nextThreadStatus(status: ThreadStatus, event: ThreadStatusEvent): ThreadStatus {
  switch (status) {
    case 'terminated':
      return 'terminated';
    case 'idle':
    case 'running':
    case 'rescheduling':
      switch (event.type) {
        case 'session.thread_status_terminated':
        case 'session.status_terminated':
          return 'terminated';
        case 'session.thread_status_idle':
          return 'idle';
        case 'session.thread_status_running':
          return 'running';
        case 'session.thread_status_rescheduled':
          return 'rescheduling';
        default:
          // Runnable input wakes an idle Thread; a running or rescheduling one stays as it is.
          return event.runnable && status === 'idle' ? 'running' : status;
      }
    default:
      return assertThreadStatus(status);
  }
}

/** The status after a batch of events the Thread sees, in order. */
export function projectThreadStatus(status: string, events: readonly ThreadStatusEvent[]): ThreadStatus {
  if (!isThreadStatus(status)) throw new Error(`unknown thread status "${status}"`);
  return events.reduce(nextThreadStatus, status);
}

/** The Session-level status events and the primary Thread's events of the same meaning. */
const PRIMARY_OWN: Record<string, string> = {
  'session.status_running': 'session.thread_status_running',
  'session.status_idle': 'session.thread_status_idle',
  'session.status_rescheduled': 'session.thread_status_rescheduled',
  'session.status_terminated': 'session.status_terminated',
};

/** A Session event as a Thread sees it: its type, the Thread it belongs to (null = primary), runnable. */
export interface ThreadScopedEvent {
  type: string;
  /** `session_thread_id` of the event; null or undefined for the primary Thread's own events. */
  sessionThreadId?: string | null;
  runnable?: boolean;
}

/** Which Thread a status machine runs for. */
export interface ThreadRef {
  id: string;
  /** True for the primary Thread (no parent). */
  primary: boolean;
}

/**
 * The event as `thread`'s status machine sees it, or undefined when it does not concern that Thread.
 * `session.status_terminated` concerns every Thread (a Fail ends them all). The primary's own events are
 * those without a `session_thread_id` (or with its id), and for it the Session's `session.status_*` are
 * its own status events. A child's are those carrying its id, where only `session.thread_status_*` and
 * runnable input move it.
 */
export function threadStatusEvent(
  thread: ThreadRef,
  event: ThreadScopedEvent,
): ThreadStatusEvent | undefined {
  if (event.type === 'session.status_terminated') return { type: event.type };
  const owner = event.sessionThreadId ?? null;
  const mine = owner === thread.id || (thread.primary && owner === null);
  if (!mine) return undefined;
  if (thread.primary && PRIMARY_OWN[event.type]) return { type: PRIMARY_OWN[event.type]! };
  if (event.type.startsWith('session.status_')) return undefined;
  return { type: event.type, runnable: event.runnable };
}

/**
 * The Session's status from its Threads' (hosted §5.1: "session status is the aggregate"): running
 * while any Thread runs; else rescheduling while any Thread reschedules; terminated when the primary
 * is (a terminated Session ends every Thread); else idle. The primary's status comes first in `statuses`.
 */
export function sessionStatusOfThreads(
  primary: ThreadStatus,
  others: readonly ThreadStatus[] = [],
): ThreadStatus {
  if (primary === 'terminated') return 'terminated';
  const all = [primary, ...others];
  if (all.includes('running')) return 'running';
  if (all.includes('rescheduling')) return 'rescheduling';
  return 'idle';
}

/** The parts of a Thread the archive and input rules read. */
export interface ThreadArchiveState {
  status: ThreadStatus;
  /** Null for the primary Thread. */
  parentThreadId: string | null;
  archiveRequestedAt: Date | null;
  archivedAt: Date | null;
}

/**
 * What `POST …/threads/{id}/archive` does (hosted §2.4: the Thread must be idle, `requires_action`
 * counts as idle; running → interrupt first):
 * - `request`: record the durable intent (`archive_requested_at` + an outbox row, one transaction);
 * - `already`: the intent (or the archive) is already recorded — answer the Thread, write nothing;
 * - `primary`: the primary Thread is never archived on its own (archive the Session) — 400;
 * - `running`: a running or rescheduling Thread — 409, interrupt it first;
 * - `terminated`: a terminated Thread is not idle — 409.
 */
export type ArchiveDecision = 'request' | 'already' | 'primary' | 'running' | 'terminated';

export function archiveDecision(thread: ThreadArchiveState): ArchiveDecision {
  if (thread.parentThreadId === null) return 'primary';
  if (thread.archivedAt || thread.archiveRequestedAt) return 'already';
  switch (thread.status) {
    case 'idle':
      return 'request';
    case 'running':
    case 'rescheduling':
      return 'running';
    case 'terminated':
      return 'terminated';
    default:
      return assertThreadStatus(thread.status);
  }
}

/**
 * Whether a Thread accepts input (messages, follow-ups, reports): not once terminated, and not once an
 * archive is requested — the intent already closes it, before the workflow finishes the archive.
 */
export function threadAcceptsInput(thread: ThreadArchiveState): boolean {
  return thread.status !== 'terminated' && !thread.archiveRequestedAt && !thread.archivedAt;
}

function assertThreadStatus(s: never): never {
  throw new Error(`unknown thread status "${String(s)}"`);
}

/** The statuses of a Session's Threads after an append: its primary's and its delegates'. */
export interface ThreadStatuses {
  primary: ThreadStatus;
  delegates: readonly ThreadStatus[];
}

/**
 * The Session's status after an append (ADR 0017), the one precedence rule between the Session's own
 * status machine and its Threads': a terminated Session stays terminated; a Session with delegate
 * Threads has the status their statuses make ({@link sessionStatusOfThreads}); else its own.
 */
export function sessionStatusAfter(own: SessionStatus, threads?: ThreadStatuses): SessionStatus {
  if (own === 'terminated' || !threads || threads.delegates.length === 0) return own;
  return sessionStatusOfThreads(threads.primary, threads.delegates);
}
