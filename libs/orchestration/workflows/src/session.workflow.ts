import {
  ApplicationFailure,
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { SessionActivities } from './activities.contract';

/** The outbox relay signals each runnable event (kind and sequence), at least once; duplicates are ignored. */
export const sessionInputSignal = defineSignal<[{ seq: number; kind?: string }]>('input');

const activities = proxyActivities<SessionActivities>({
  startToCloseTimeout: '10 minutes',
  // Activities heartbeat while they wait on the model: a worker that dies mid-turn is noticed in seconds
  // and the activity is retried elsewhere (its events are idempotent).
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
  },
});

export interface SessionWorkflowState {
  sessionId: string;
  /** The highest user-input sequence already consumed by a turn. */
  consumed?: number;
  turn?: number;
}

/** Turns per workflow run before continuing as new, to bound history size for long Sessions. */
const TURNS_PER_RUN = 100;
/** Model calls per turn (tool round trips) before the turn is stopped. */
const STEPS_PER_TURN = 50;

/**
 * One workflow per Session (workflow id = session id). It keeps only small state — what input it consumed,
 * the turn counter, which tool results it waits for — and decides; activities do all I/O idempotently.
 * User input that arrives during a turn starts the next turn; tool results wake the waiting turn.
 */
export async function sessionWorkflow(state: SessionWorkflowState): Promise<void> {
  const { sessionId } = state;
  let consumed = state.consumed ?? 0;
  let pendingInput = consumed;
  let resultsSignalled = 0;
  let turn = state.turn ?? 0;
  setHandler(sessionInputSignal, ({ seq, kind }) => {
    if (kind === 'user.tool_result') resultsSignalled += 1;
    else if (seq > pendingInput) pendingInput = seq;
  });
  for (let i = 0; i < TURNS_PER_RUN; i++) {
    await condition(() => pendingInput > consumed);
    consumed = pendingInput;
    turn += 1;
    await activities.beginTurn({ sessionId, turn });
    let stopReason = 'end_turn';
    let eventIds: string[] | undefined;
    try {
      for (let step = 0; step < STEPS_PER_TURN; step++) {
        const outcome = await activities.runModelStep({ sessionId, turn, step });
        if (outcome.stopReason === 'end_turn') break;
        if (outcome.stopReason === 'requires_action') {
          stopReason = 'requires_action';
          eventIds = outcome.eventIds;
          break;
        }
        // Wait until every tool call of this step has its result (re-checked on each result signal).
        for (;;) {
          const seen = resultsSignalled;
          if (await activities.toolResultsReady({ sessionId, toolUseIds: outcome.toolUseIds })) break;
          await condition(() => resultsSignalled > seen);
        }
      }
    } catch (err) {
      if (!(err instanceof ApplicationFailure) && !(err instanceof Error)) throw err;
      stopReason = 'retries_exhausted';
    }
    await activities.endTurn({ sessionId, turn, stopReason, eventIds });
  }
  await continueAsNew<typeof sessionWorkflow>({ sessionId, consumed, turn });
}
