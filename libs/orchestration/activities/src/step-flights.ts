import { CancelledFailure } from '@temporalio/activity';

/**
 * The model requests this process is making, by step (`<session>/<step key>`): one at a time per step
 * (ADR 0019 "One request per step in a process"). Two attempts of one step can overlap in a process: an
 * activity whose workflow run was lost keeps running until its heartbeat says so, and it may start the
 * next step itself (the in-activity wait) while the new run schedules that same step. The second attempt
 * waits for the first and reads its reply from the log instead of asking the model again.
 */
export class StepFlights {
  private readonly flights = new Map<string, Promise<void>>();

  /** The step claimed (`release` ends the claim, once or more), or the flight already under way. */
  claim(step: string): { release: () => void } | { busy: Promise<void> } {
    const busy = this.flights.get(step);
    if (busy) return { busy };
    let landed!: () => void;
    const flight = new Promise<void>((resolve) => (landed = resolve));
    this.flights.set(step, flight);
    return {
      release: () => {
        if (this.flights.get(step) === flight) this.flights.delete(step);
        landed();
      },
    };
  }

  /** Steps in flight now. */
  get size(): number {
    return this.flights.size;
  }
}

/**
 * Runs `fn` with a list it leaves claims in; if `fn` fails (its transaction did not commit), every claim
 * it made is released.
 */
export async function claiming<T>(fn: (claims: Array<() => void>) => Promise<T>): Promise<T> {
  const claims: Array<() => void> = [];
  try {
    return await fn(claims);
  } catch (err) {
    for (const release of claims) release();
    throw err;
  }
}

/** Waits for another attempt's flight to land; an activity cancelled meanwhile stops waiting. */
export async function untilLanded(flight: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new CancelledFailure('the step was cancelled');
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    if ((await Promise.race([flight, aborted])) === 'aborted')
      throw new CancelledFailure('the step was cancelled');
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
