import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import { MODEL_REQUEST_EXHAUSTED, type SessionActivities } from './activities.contract';
import { MODEL_ACTIVITY_OPTIONS } from './activity-options';
import { workflowWake } from '@mango/domain-sessions';
import { runOutcomeLoop } from './outcome-loop';

/** The outbox relay signals each event that can move the Session (kind and sequence), at least once; duplicates are ignored. */
export const sessionInputSignal =
  defineSignal<[{ seq: number; kind?: string; toolUseId?: string | null }]>('input');

const activities = proxyActivities<SessionActivities>(MODEL_ACTIVITY_OPTIONS);

/**
 * Short database steps (turn bookkeeping, result checks) run as local activities: no round trip through
 * the Temporal server for each, which is most of the loop's overhead per tool call.
 */
const local = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

export interface SessionWorkflowState {
  sessionId: string;
  /**
   * A delegate or Advisor Thread's workflow (id `thread-<session>-<thread>`, ADR 0017): the same turn
   * loop over that Thread's own events; absent for the primary Thread (workflow id = session id).
   */
  threadId?: string;
  /** The highest user-input sequence already consumed by a turn. */
  consumed?: number;
  turn?: number;
  /** The highest `user.interrupt` sequence seen. */
  interrupted?: number;
  /** The last turn stopped at the budget gate; a budget change resumes it. */
  paused?: boolean;
  /** Input signalled to the previous run but not consumed by a turn yet. */
  pending?: number;
  /** A budget change reached the previous run after its last turn paused. */
  resume?: boolean;
  /** Turns per run before continuing as new (default 100; the relay passes its configuration). */
  turnsPerRun?: number;
  /** A `user.define_outcome` was signalled: turns end through the outcome loop (outcome-loop.ts). */
  outcomes?: boolean;
}

/** The patch marker of the start-from-log read: histories recorded before it replay without it. */
export const START_FROM_LOG_PATCH = 'mango-start-from-log';

/**
 * The patch marker of multi-step model activities (ADR 0019): the workflow passes `maxSteps` and advances by
 * the steps the activity ran; histories recorded before it call one step per activity.
 */
export const STEPS_IN_ACTIVITY_PATCH = 'mango-steps-in-activity';

/** Turns per workflow run before continuing as new, to bound history size for long Sessions. */
const DEFAULT_TURNS_PER_RUN = 100;
/** Model calls per turn (tool round trips) before the turn is stopped. */
const STEPS_PER_TURN = 50;

/**
 * One workflow per Session (workflow id = session id). It keeps only small state — what input it consumed,
 * the turn counter, interrupts, the budget pause — and decides; activities do all I/O idempotently.
 * User input that arrives during a turn starts the next turn; tool results wake the waiting turn; an
 * interrupt cancels the running turn, which ends idle (`end_turn`) with its open calls closed; a budget
 * change resumes a turn paused at the budget gate.
 */
export async function sessionWorkflow(state: SessionWorkflowState): Promise<void> {
  const { sessionId, threadId } = state;
  // Every activity call names the Thread (nothing for the primary, whose calls stay as they were).
  const thread = threadId ? { threadId } : {};
  let consumed = state.consumed ?? 0;
  let pendingInput = Math.max(state.pending ?? 0, consumed);
  const turnsPerRun = state.turnsPerRun ?? DEFAULT_TURNS_PER_RUN;
  let interrupted = state.interrupted ?? 0;
  let paused = state.paused ?? false;
  // Tool calls answered, as signalled (each user.tool_result's call id): waiting needs no activity.
  const answered = new Set<string>();
  let budgetChanges = state.resume ? 1 : 0;
  let turn = state.turn ?? 0;
  let running: { scope: CancellationScope; since: number } | undefined;
  let terminated = false;
  let archived = false;
  let outcomes = state.outcomes ?? false;
  // Budget changes seen when the last turn began: a change during or after a paused turn resumes it.
  let changesBefore = 0;
  setHandler(sessionInputSignal, ({ seq, kind, toolUseId }) => {
    // What the kind does is the event-kind vocabulary's (libs/domain/sessions/src/event-kinds.ts); a
    // signal without a kind (older relays) is input that starts a turn.
    const wake = kind === undefined ? 'turn' : workflowWake(kind);
    if (wake === 'outcome') {
      outcomes = true;
      if (seq > pendingInput) pendingInput = seq;
    } else if (wake === 'tool_result') {
      if (toolUseId) answered.add(toolUseId);
    } else if (wake === 'budget') budgetChanges += 1;
    else if (wake === 'archive') {
      // The relay finished this Thread's archive (it was idle): the workflow stops once no turn runs.
      archived = true;
    } else if (wake === 'terminate') {
      // A worker's Fail terminated the Session: stop at once; nothing more is recorded.
      terminated = true;
      running?.scope.cancel();
    } else if (wake === 'interrupt') {
      if (seq <= interrupted) return; // a redelivered signal
      interrupted = seq;
      if (running && seq > running.since) running.scope.cancel();
    } else if (wake === 'turn' && seq > pendingInput) pendingInput = seq;
  });
  // A start without state (no `turn`: not a continue-as-new) rebuilds it from the Session log, and a
  // turn the log shows begun and not ended is continued, not waited for (ADR 0016).
  let open: { step: number; interrupted: boolean } | undefined;
  if (state.turn === undefined && patched(START_FROM_LOG_PATCH)) {
    const fromLog = await local.resumeState({ sessionId, ...thread });
    if (fromLog.stopped) return;
    consumed = fromLog.consumed;
    turn = fromLog.turn;
    pendingInput = Math.max(pendingInput, fromLog.pending, consumed);
    interrupted = Math.max(interrupted, fromLog.interrupted);
    paused = fromLog.paused;
    if (fromLog.resume) budgetChanges += 1;
    if (fromLog.outcomes) outcomes = true;
    open = fromLog.openTurn;
    // Signals that arrived during the read: a Fail stops; an interrupt after the open turn's input ends it.
    if (terminated) return;
    if (open && interrupted > consumed) open = { ...open, interrupted: true };
  }
  for (let i = 0; i < turnsPerRun; i++) {
    const resumed = open;
    open = undefined;
    if (!resumed) {
      await condition(
        () => terminated || archived || pendingInput > consumed || (paused && budgetChanges > changesBefore),
      );
      if (terminated || archived) return;
      changesBefore = budgetChanges;
      paused = false;
      consumed = pendingInput;
      turn += 1;
    }
    let stopReason = 'end_turn';
    let eventIds: string[] | undefined;
    let unrecordedError: string | undefined;
    let interruptedTurn = false;
    const scope = new CancellationScope();
    running = { scope, since: consumed };
    try {
      await scope.run(async () => {
        // A resumed turn that an interrupt already stopped only ends.
        if (resumed?.interrupted) return;
        await local.beginTurn({ sessionId, ...thread, turn });
        let step = resumed?.step ?? 0;
        // Model steps until the model ends its turn (true), or stops for an action or the budget (false).
        const runSteps = async (): Promise<boolean> => {
          for (let n = 0; n < STEPS_PER_TURN;) {
            // The activity may run several steps when tool results come back fast (ADR 0019); it says how
            // many, so step numbers (idempotency keys) stay unique and STEPS_PER_TURN still bounds a turn.
            const many = patched(STEPS_IN_ACTIVITY_PATCH);
            const left = STEPS_PER_TURN - n;
            const outcome = await activities.runModelStep({
              sessionId,
              ...thread,
              turn,
              step,
              ...(many ? { maxSteps: left } : {}),
            });
            const ran = many ? Math.min(Math.max(1, outcome.steps ?? 1), left) : 1;
            step += ran;
            n += ran;
            if (outcome.stopReason === 'end_turn') return true;
            if (outcome.stopReason === 'budget_reached' || outcome.stopReason === 'requires_action') {
              stopReason = outcome.stopReason;
              if (outcome.stopReason === 'requires_action') eventIds = outcome.eventIds;
              return false;
            }
            // MCP calls are made here, one at a time, each journaled by the activity.
            for (const mcpToolUseId of outcome.mcpToolUseIds ?? [])
              await activities.runMcpCall({ sessionId, mcpToolUseId, ...thread });
            // Wait until every tool call of this step has its result. The step says which calls had one
            // when it read the log (`answered`): every later result reaches this run as a signal, so the
            // signals alone decide. A step result without it (recorded before) gets one look at the log.
            const ids = outcome.toolUseIds;
            for (const id of outcome.answered ?? []) answered.add(id);
            const ready = !outcome.answered && (await local.toolResultsReady({ sessionId, toolUseIds: ids }));
            if (!ready) await condition(() => ids.every((id) => answered.has(id)));
          }
          return true;
        };
        if (!(await runSteps()) || !outcomes) return;
        // Outcomes: grade, revise, grade again (outcome-loop.ts).
        stopReason = (await runOutcomeLoop({ sessionId, turn }, runSteps)) ?? stopReason;
      });
    } catch (err) {
      if (isCancellation(err)) {
        stopReason = 'end_turn';
        interruptedTurn = true;
        if (outcomes && !terminated) await local.interruptOutcome({ sessionId, turn });
      } else if (err instanceof Error) {
        stopReason = 'retries_exhausted';
        const failure = (err as { cause?: unknown }).cause;
        // The activity's own message (e.g. which variable to set), not Temporal's "Activity task failed".
        if (!(failure instanceof ApplicationFailure && failure.type === MODEL_REQUEST_EXHAUSTED))
          unrecordedError = failure instanceof Error && failure.message ? failure.message : err.message;
        consumed = pendingInput; // queued input is flushed with the failed turn
      } else throw err;
    } finally {
      running = undefined;
    }
    if (terminated) return;
    if (stopReason === 'budget_reached') paused = true;
    const ended = await local.endTurn({
      sessionId,
      ...thread,
      turn,
      stopReason,
      eventIds,
      unrecordedError,
      ...(interruptedTurn && threadId ? { interrupted: true } : {}),
    });
    // An Advisor Thread ends itself after its one answer (ADR 0017 "Advisor").
    if (ended?.finished) return;
  }
  // Everything a signal told this run and no turn used yet goes to the next run.
  await continueAsNew<typeof sessionWorkflow>({
    sessionId,
    ...thread,
    consumed,
    turn,
    interrupted,
    paused,
    pending: pendingInput,
    resume: paused && budgetChanges > changesBefore,
    turnsPerRun,
    ...(outcomes ? { outcomes } : {}),
  });
}
