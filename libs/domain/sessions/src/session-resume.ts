/**
 * Where a Session's workflow stands, rebuilt from its log alone (docs/adr/0016-start-from-the-log.md): a
 * Session workflow that starts without state — its Temporal history was lost, it was terminated, or it
 * is the Session's first — reads this once and goes on from there, so the PostgreSQL log, not Temporal,
 * is the source of truth. Pure and workflow-safe (imports only the event-kind vocabulary).
 */
import { SESSION_EVENT_KINDS, startsTurn } from './event-kinds';

/**
 * The Session-wide kinds: they carry no Thread, and a Thread's rebuild reads them beside its own events
 * (interrupts, budget changes, the terminal events).
 */
export const SESSION_WIDE_RESUME_TYPES: readonly string[] = [
  'user.interrupt',
  'session.updated',
  'session.status_terminated',
  'session.deleted',
];

/**
 * Every kind {@link resumeStateFromLog} reads by its type (it also reads every event whose idempotency key
 * is a turn's, whatever its type): the start-from-log read (`SessionLog.resumeLog`) selects exactly these,
 * so the fold of that read equals the fold of the whole log (an int-spec checks it for every kind).
 */
export const RESUME_LOG_TYPES: readonly string[] = SESSION_EVENT_KINDS.filter(
  (kind) => startsTurn(kind) || SESSION_WIDE_RESUME_TYPES.includes(kind),
);

/** What the rebuild looks at in one logged event (the activity selects only these columns). */
export interface ResumeLogEvent {
  seq: string | number;
  type: string;
  idempotencyKey?: string | null;
  /** session.status_idle: `stop_reason.type`. */
  stopReason?: string | null;
  /** session.updated: it changed or removed the budget. */
  budgetChanged?: boolean;
}

/** The workflow's decision state (the fields of `SessionWorkflowState`) as the log implies it. */
export interface SessionResumeState {
  /** Terminated or deleted: the workflow stops at once, nothing is recorded. */
  stopped: boolean;
  /** The highest turn-starting input sequence a turn has taken. */
  consumed: number;
  /** The highest turn number in the log (0: no turn yet). */
  turn: number;
  /** The highest `user.interrupt` sequence. */
  interrupted: number;
  /** The last turn ended at the budget gate. */
  paused: boolean;
  /** The highest turn-starting input sequence (a turn starts when it is above `consumed`). */
  pending: number;
  /** A budget change came after that pause: the paused turn resumes. */
  resume: boolean;
  /** The Session has had a `user.define_outcome`: its turns end through the outcome loop. */
  outcomes?: true;
  /**
   * The last turn began (`session.status_running` under `turn:<n>:running`) and never ended: the
   * workflow continues turn `turn` at `step` (its activities are idempotent, so what the step already
   * recorded is returned, not redone). `interrupted`: a `user.interrupt` came after the turn's input,
   * so the turn only ends (`end_turn`).
   */
  openTurn?: { step: number; interrupted: boolean };
}

const TURN_KEY = /^turn:(\d+):(.*)$/;
const STEP_KEY = /^step:(\d+)(:|$)/;

/** The workflow state a Session's log implies (events in sequence order, or any order: only maxima matter). */
export function resumeStateFromLog(events: readonly ResumeLogEvent[]): SessionResumeState {
  let stopped = false;
  let outcomes = false;
  let turn = 0;
  let interrupted = 0;
  let lastBudgetChange = 0;
  const running = new Map<number, number>();
  const idle = new Map<number, { seq: number; reason: string | null | undefined }>();
  const steps = new Map<number, number>();
  const inputs: number[] = [];
  for (const e of events) {
    const seq = Number(e.seq);
    if (e.type === 'session.status_terminated' || e.type === 'session.deleted') stopped = true;
    if (e.type === 'user.interrupt') interrupted = Math.max(interrupted, seq);
    if (e.type === 'user.define_outcome') outcomes = true;
    if (startsTurn(e.type)) inputs.push(seq);
    if (e.type === 'session.updated' && e.budgetChanged) lastBudgetChange = Math.max(lastBudgetChange, seq);
    const key = e.idempotencyKey ? TURN_KEY.exec(e.idempotencyKey) : null;
    if (!key) continue;
    const n = Number(key[1]);
    turn = Math.max(turn, n);
    const rest = key[2]!;
    if (rest === 'running' && e.type === 'session.status_running') running.set(n, seq);
    else if (rest === 'idle' && e.type === 'session.status_idle') idle.set(n, { seq, reason: e.stopReason });
    const step = STEP_KEY.exec(rest);
    if (step) steps.set(n, Math.max(steps.get(n) ?? 0, Number(step[1])));
  }
  const maxBelow = (limit: number) => inputs.reduce((m, s) => (s < limit && s > m ? s : m), 0);
  const pending = maxBelow(Infinity);
  const withOutcomes = outcomes ? { outcomes: true as const } : {};
  if (turn === 0)
    return {
      stopped,
      consumed: 0,
      turn,
      interrupted,
      paused: false,
      pending,
      resume: false,
      ...withOutcomes,
    };
  // A turn takes every input signalled before it began: everything below its status_running. A turn
  // whose keys exist but whose status_running does not (a crash in between) took everything so far.
  const began = running.get(turn) ?? Infinity;
  const ended = idle.get(turn);
  // A failed turn flushes the input that queued while it ran (the workflow's retries_exhausted path).
  const consumed = maxBelow(ended?.reason === 'retries_exhausted' ? ended.seq : began);
  const paused = ended?.reason === 'budget_reached';
  const state: SessionResumeState = {
    stopped,
    consumed,
    turn,
    interrupted,
    paused,
    pending,
    resume: paused && lastBudgetChange > ended!.seq,
    ...withOutcomes,
  };
  if (!ended) state.openTurn = { step: steps.get(turn) ?? 0, interrupted: interrupted > consumed };
  return state;
}

/**
 * Paused at the budget gate: the last turn ended idle with `budget_reached` and no budget change came
 * since (a change wakes the workflow, which resumes the turn). The fold of any suffix of the log that
 * starts at the last turn's `session.status_running` answers as the fold of the whole log.
 */
export function pausedAtBudget(state: Pick<SessionResumeState, 'paused' | 'resume'>): boolean {
  return state.paused && !state.resume;
}

/** The event whose trace a turn continues: the latest user.message (its `_traceparent`, stored by the API). */
export const TURN_ORIGIN_TYPE = 'user.message';

/** The trace context the API stored on an event (`_traceparent`, internal). */
export function traceparentOf(body: Record<string, unknown> | null | undefined): string | undefined {
  const tp = body?._traceparent;
  return typeof tp === 'string' ? tp : undefined;
}

/** The trace of the turn: the one of the latest {@link TURN_ORIGIN_TYPE} among `events` (in log order). */
export function turnTraceparent(
  events: ReadonlyArray<{ type: string; body: Record<string, unknown> }>,
): string | undefined {
  for (let i = events.length - 1; i >= 0; i--)
    if (events[i]!.type === TURN_ORIGIN_TYPE) return traceparentOf(events[i]!.body);
  return undefined;
}
