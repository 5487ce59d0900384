import {
  ApplicationFailure,
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { SessionActivities } from './activities.contract';

/** The outbox relay signals each runnable event's sequence number (at least once; duplicates are ignored). */
export const sessionInputSignal = defineSignal<[{ seq: number }]>('input');

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
  /** The highest input sequence already consumed by a turn. */
  consumed?: number;
  turn?: number;
}

/** Turns per workflow run before continuing as new, to bound history size for long Sessions. */
const TURNS_PER_RUN = 100;

/**
 * One workflow per Session (workflow id = session id). It keeps only small state — what it consumed
 * and the turn counter — and decides; activities do all I/O idempotently. Input that arrives during a turn
 * is taken by the next turn.
 */
export async function sessionWorkflow(state: SessionWorkflowState): Promise<void> {
  const { sessionId } = state;
  let consumed = state.consumed ?? 0;
  let pending = consumed;
  let turn = state.turn ?? 0;
  setHandler(sessionInputSignal, ({ seq }) => {
    if (seq > pending) pending = seq;
  });
  for (let i = 0; i < TURNS_PER_RUN; i++) {
    await condition(() => pending > consumed);
    consumed = pending;
    turn += 1;
    await activities.beginTurn({ sessionId, turn });
    let stopReason: string;
    try {
      ({ stopReason } = await activities.runModelTurn({ sessionId, turn }));
    } catch (err) {
      if (!(err instanceof ApplicationFailure) && !(err instanceof Error)) throw err;
      stopReason = 'retries_exhausted';
    }
    await activities.endTurn({ sessionId, turn, stopReason });
  }
  await continueAsNew<typeof sessionWorkflow>({ sessionId, consumed, turn });
}
