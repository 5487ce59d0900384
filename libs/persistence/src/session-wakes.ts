/**
 * In-process wake-ups by Session (ADR 0019): the orchestrator's outbox relay already LISTENs on the
 * outbox channel, whose notices carry the Session id of an append that wakes the workflow (a tool
 * result, an interrupt, a Fail …). A model step that waits for its tool calls' results subscribes here
 * instead of opening a LISTEN connection of its own. A notice only says "look now": the log stays the
 * truth, and a lost notice costs the waiter its safety re-check interval, never correctness.
 */
export class SessionWakes {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Calls `fn` at each wake-up of the Session until the returned function is called. */
  subscribe(sessionId: string, fn: () => void): () => void {
    let set = this.waiters.get(sessionId);
    if (!set) this.waiters.set(sessionId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.waiters.get(sessionId) === set) this.waiters.delete(sessionId);
    };
  }

  /** A notice for the Session (the outbox channel's payload is its id). */
  wake(sessionId: string): void {
    for (const fn of [...(this.waiters.get(sessionId) ?? [])]) fn();
  }

  /**
   * Starts remembering whether the Session is woken, before the thing to wait for can happen (e.g. before
   * a step commits the tool calls whose results it will wait for). Given to {@link untilReady} as
   * `since`, it spares the first look when nothing woke the Session meanwhile.
   */
  watch(sessionId: string): WakeWatch {
    const watch = { woken: false, close: () => unsubscribe() };
    const unsubscribe = this.subscribe(sessionId, () => (watch.woken = true));
    return watch;
  }

  /** Every waiter looks again (the LISTEN connection came back: notices sent meanwhile are gone). */
  wakeAll(): void {
    for (const set of [...this.waiters.values()]) for (const fn of [...set]) fn();
  }

  /** Sessions with a waiter now. */
  get waiting(): number {
    return this.waiters.size;
  }
}

/** See {@link SessionWakes.watch}. */
export interface WakeWatch {
  /** A wake-up of the Session came since the watch began. */
  readonly woken: boolean;
  close(): void;
}

/** How {@link untilReady} ended: `check` said ready, the window passed, or `signal` aborted. */
export type WaitEnd = 'ready' | 'timeout' | 'aborted';

/**
 * Waits until `check` answers true: it looks at once, after every wake-up of the Session, every
 * `recheckMs` (the safety net for a lost notice) and once more when `timeoutMs` has passed. Wake-ups
 * during a check are not lost (the subscription starts before the first look). With `since` (a watch
 * begun before what is awaited could happen), the first look is made only if that watch was woken: what
 * could not have happened before the watch began cannot be there unannounced.
 */
export async function untilReady(
  wakes: SessionWakes,
  sessionId: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; recheckMs: number; signal?: AbortSignal; since?: WakeWatch },
): Promise<WaitEnd> {
  const { timeoutMs, recheckMs, signal, since } = options;
  const deadline = Date.now() + timeoutMs;
  let woken = false;
  let poke: (() => void) | undefined;
  const unsubscribe = wakes.subscribe(sessionId, () => {
    woken = true;
    poke?.();
  });
  // This subscription now hears every later wake-up: the watch's answer covers the time before it.
  let look = since === undefined || since.woken;
  since?.close();
  try {
    for (; ; look = true) {
      if (signal?.aborted) return 'aborted';
      woken = false;
      if (look && (await check())) return 'ready';
      if (signal?.aborted) return 'aborted';
      const left = deadline - Date.now();
      if (left <= 0) return 'timeout';
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          poke = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, recheckMs));
        poke = done;
        signal?.addEventListener('abort', done);
      });
    }
  } finally {
    unsubscribe();
  }
}
