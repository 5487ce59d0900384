/**
 * Idle Session activations and the supervisor's slots (docs/operator-guide.md, The Docker supervisor).
 * A Session item runner waits out `MANGO_SESSION_IDLE_MS` after its Session went idle, holding one of the
 * supervisor's `MANGO_MAX_CONCURRENT_ITEMS` slots. It writes one output line when that countdown starts
 * and one when it stops; the supervisor reads them to know which activations it may ask to end early
 * (SIGTERM: the runner drains, Stops its Work and exits) when Work is waiting for a slot.
 *
 * The lines come from inside the sandbox, so they are trusted for nothing but this: a forged "idle" only
 * makes that sandbox's own activation end sooner, which it can do anyway; a forged "busy" keeps a slot
 * held, which a running tool does too.
 */

/** The runner's line when its idle countdown starts. */
export const ACTIVATION_IDLE_MSG = 'session activation idle';
/** The runner's line when its idle countdown stops (new input, a tool call). */
export const ACTIVATION_BUSY_MSG = 'session activation busy';

export type ActivationState = 'idle' | 'busy';

/** The state one runner output line reports for this Session's activation, if it is such a line. */
export function activationStateOf(line: string, sessionId: string): ActivationState | undefined {
  if (!line.includes(ACTIVATION_IDLE_MSG) && !line.includes(ACTIVATION_BUSY_MSG)) return undefined;
  try {
    const o = JSON.parse(line) as { msg?: unknown; session_id?: unknown };
    if (o.session_id !== sessionId) return undefined;
    return o.msg === ACTIVATION_IDLE_MSG ? 'idle' : o.msg === ACTIVATION_BUSY_MSG ? 'busy' : undefined;
  } catch {
    return undefined;
  }
}

/** Which running activations (by Work id) are idle, since when, and which were already asked to end. */
export class IdleActivations {
  private readonly idleSince = new Map<string, number>();
  private readonly yielded = new Set<string>();

  /** Applies a runner output line of this Work's Session activation (other lines are ignored). */
  observe(workId: string, sessionId: string, line: string, now = Date.now()): void {
    const state = activationStateOf(line, sessionId);
    if (state === 'idle') {
      if (!this.idleSince.has(workId)) this.idleSince.set(workId, now);
    } else if (state === 'busy') this.idleSince.delete(workId);
  }

  /** The activation ended: it holds no slot any more. */
  forget(workId: string): void {
    this.idleSince.delete(workId);
    this.yielded.delete(workId);
  }

  /** The activation idle longest, for at least `minIdleMs`, that was not already asked to end. */
  pick(now: number, minIdleMs: number): string | undefined {
    let best: string | undefined;
    let bestSince = Infinity;
    for (const [workId, since] of this.idleSince) {
      if (this.yielded.has(workId) || now - since < minIdleMs) continue;
      if (since < bestSince) [best, bestSince] = [workId, since];
    }
    return best;
  }

  /** How long the activation has been idle (undefined when it is not). */
  idleFor(workId: string, now = Date.now()): number | undefined {
    const since = this.idleSince.get(workId);
    return since === undefined ? undefined : now - since;
  }

  /** The activation was asked to end: it is not picked again. */
  yielding(workId: string): void {
    this.yielded.add(workId);
  }
}
