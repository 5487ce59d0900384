/**
 * A pass that runs every `intervalMs` in the background of a process (a pruner, a sweeper): never two at
 * once in the process (a tick while one runs is skipped), a failed pass reported to `onError` and tried again
 * at the next tick, the timer unref'd (it never holds the process open), and `stop()` waiting for the pass in
 * flight. `runOnce()` runs a pass now (tests, and callers that want its result), sharing the same guard.
 * Every process may run its own: the passes themselves are safe to run concurrently across processes.
 */
export class PeriodicPass<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;

  constructor(
    private readonly options: {
      /** Milliseconds between passes; 0 or less: never on a timer (runOnce still works). */
      intervalMs: number;
      pass: () => Promise<T>;
      onError: (err: unknown) => void;
    },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.runOnce().catch(this.options.onError);
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Runs a pass now, or joins the one in flight. */
  runOnce(): Promise<T> {
    if (this.running) return this.running;
    const run = this.options.pass().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }
}

/** Runs `step` (which handles at most `batch` rows) until a step handles fewer; returns the total. */
export async function drainInBatches(
  step: (batch: number) => Promise<number>,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step(batch);
    total += n;
    if (n < batch) return total;
  }
}
