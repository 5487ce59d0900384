import { threadKeyPrefix, threadLog } from '@mango/domain-sessions';
import {
  type SessionLog,
  type SessionLogCache,
  type SessionWakes,
  untilReady,
  type WakeWatch,
} from '@mango/persistence';
import type { ModelStepRef } from '@mango/workflows';
import { Context } from '@temporalio/activity';
import { resultsState } from './step-continuation';
import { claiming } from './step-flights';
import type { PrepareInput, PreparedStep } from './step-prepare';

/**
 * The in-activity wait for a step's tool results (ADR 0019, `MANGO_TOOL_RESULT_WAIT_MS`): `ms` 0 or
 * absent turns it off; `wakes` are the outbox relay's notices by Session; `recheckMs` the safety re-check.
 */
export interface ToolResultWait {
  ms: number;
  wakes: SessionWakes;
  recheckMs?: number;
}

/** The wait's look at the log when no notice came (a lost notice costs at most this). */
const RECHECK_MS = 500;

/** A step's start made by the wait that found its inputs ready (see {@link awaitResults}). */
export interface ReadyStep {
  prepared: PreparedStep;
}

/** How the wait for one step's calls ended, which calls it saw answered, and the next step it started. */
export interface WaitEnded {
  end: 'ready' | 'timeout' | 'stopped' | 'aborted';
  answered: string[];
  next?: ReadyStep;
}

/** What the wait needs: the log (and the process's cache of it), the wait's settings, and the step start. */
export interface StepWaitDeps {
  log: SessionLog;
  logs: SessionLogCache;
  wait: ToolResultWait;
  /** Starts the next step in the wait's transaction (step-prepare.ts). */
  prepare: (input: PrepareInput) => Promise<PreparedStep>;
}

/**
 * The in-activity wait for one step's calls: 'ready' when every call has its result. The look that finds
 * them all answered also starts the next step in its transaction (`next`): the row is locked and the log
 * read already, so the step needs no transaction of its own for that.
 */
export async function awaitResults(
  deps: StepWaitDeps,
  at: { ref: ModelStepRef; toolUseIds: string[]; watch?: WakeWatch },
): Promise<WaitEnded> {
  const { ref, toolUseIds } = at;
  const { sessionId, threadId, turn, step } = ref;
  const { log, wait } = deps;
  const prefix = threadKeyPrefix(threadId);
  const since = [`${prefix}turn:${turn}:running`, `${prefix}turn:${turn}:step:${step}:model_start`];
  const reader = log.reader(sessionId, deps.logs);
  let answered: string[] = [];
  let stopped = false;
  let next: ReadyStep | undefined;
  const look = () =>
    claiming((claims) =>
      log.withOpenSession(sessionId, async (tx, s) => {
        const whole = await reader.read(tx);
        const found = resultsState(threadLog(whole, threadId), toolUseIds, since);
        if (!found.stopped && found.answered.length === toolUseIds.length)
          next = {
            prepared: await deps.prepare({
              tx,
              session: s,
              ref: { ...ref, step: step + 1 },
              read: async () => whole,
              claims,
            }),
          };
        return found;
      }),
    );
  const end = await untilReady(
    wait.wakes,
    sessionId,
    async () => {
      const state = await look();
      // A deleted or terminated Session: nothing more is recorded; the workflow stops it.
      if (!state) return (stopped = true);
      answered = state.answered;
      stopped = state.stopped;
      return stopped || answered.length === toolUseIds.length;
    },
    {
      timeoutMs: wait.ms,
      recheckMs: wait.recheckMs ?? RECHECK_MS,
      signal: Context.current().cancellationSignal,
      since: at.watch,
    },
  );
  return { end: end === 'ready' && stopped ? 'stopped' : end, answered, ...(next ? { next } : {}) };
}
