/**
 * The Session status state machine (openapi.yaml `Session.status`, ADR 0005): which event moves
 * which status. Pure and exhaustive; the Session log (`libs/persistence/src/session-log.repository.ts`)
 * is the only writer of `sessions.status`, and it writes what this function answers for each event it
 * appends.
 *
 *            runnable input / status_running        status_rescheduled
 *    idle ─────────────────────────────────▶ running ◀──────────────────▶ rescheduling
 *      ▲                                        │       status_running
 *      └──────────── status_idle ───────────────┘ (also from rescheduling)
 *
 *    status_terminated: any status → terminated (absorbing: nothing moves a terminated Session).
 *
 * Workflow-safe: imports nothing that does I/O.
 */

export const SESSION_STATUSES = ['idle', 'running', 'rescheduling', 'terminated'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A new Session is idle until runnable input arrives. */
export const INITIAL_SESSION_STATUS: SessionStatus = 'idle';

/** Why a turn ended (`session.status_idle.stop_reason.type`). */
export const SESSION_STOP_REASONS = [
  'end_turn',
  'requires_action',
  'budget_reached',
  'retries_exhausted',
] as const;
export type SessionStopReason = (typeof SESSION_STOP_REASONS)[number];

/** What the machine looks at in an appended event: its type, and whether it is runnable (needs the worker). */
export interface StatusEvent {
  type: string;
  /** Runnable input (client messages, confirmations, custom tool results, allowed sandbox calls). */
  runnable?: boolean;
}

function isStatus(s: string): s is SessionStatus {
  return (SESSION_STATUSES as readonly string[]).includes(s);
}

/** The status after `event` is appended to a Session in `status`. */
export function nextSessionStatus(status: SessionStatus, event: StatusEvent): SessionStatus {
  switch (status) {
    case 'terminated':
      return 'terminated';
    case 'idle':
    case 'running':
    case 'rescheduling':
      switch (event.type) {
        case 'session.status_terminated':
          return 'terminated';
        case 'session.status_idle':
          return 'idle';
        case 'session.status_running':
          return 'running';
        case 'session.status_rescheduled':
          return 'rescheduling';
        default:
          // Runnable input wakes an idle Session; a running or rescheduling one stays as it is.
          return event.runnable && status === 'idle' ? 'running' : status;
      }
    default:
      return assertStatus(status);
  }
}

/** The status after a batch of appended events, in order. */
export function projectSessionStatus(status: string, events: readonly StatusEvent[]): SessionStatus {
  if (!isStatus(status)) throw new Error(`unknown session status "${status}"`);
  return events.reduce(nextSessionStatus, status);
}

function assertStatus(s: never): never {
  throw new Error(`unknown session status "${String(s)}"`);
}
