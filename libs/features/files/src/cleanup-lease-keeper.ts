import { Logger } from '@nestjs/common';
import { CleanupLease, ObjectCleanupRepository } from './object-cleanup.repository';

/** Raised into an upload whose cleanup lease was taken over: it must not commit its File. */
export class LeaseLostError extends Error {
  /** The request was fine; the server lost its race with a sweeper (it stalled past the lease): retry. */
  readonly retryable = true;

  constructor(readonly lease: CleanupLease) {
    super(`the upload lost its cleanup lease ${lease.id}`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Keeps a cleanup lease alive while an upload streams: renews it every third of `leaseMs`, so a
 * sweeper in any process sees it as live. If a renewal finds the lease taken (the upload stalled past
 * it), `signal` aborts with a LeaseLostError. A failed renewal (database blip) is retried next tick.
 */
export class CleanupLeaseKeeper {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private renewal: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly cleanups: ObjectCleanupRepository,
    readonly lease: CleanupLease,
    private readonly leaseMs: number,
    private readonly log = new Logger('files'),
  ) {
    this.timer = setInterval(() => this.tick(), Math.max(20, Math.floor(leaseMs / 3)));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private tick(): void {
    if (this.stopped) return;
    this.renewal = this.renewal.then(async () => {
      if (this.stopped || this.signal.aborted) return;
      try {
        if (!(await this.cleanups.renew(this.lease, this.leaseMs)))
          this.controller.abort(new LeaseLostError(this.lease));
      } catch (err) {
        this.log.warn(`renewing upload lease ${this.lease.id} failed: ${String(err)}`);
      }
    });
  }

  /** Stops renewing and waits for a renewal in flight, so nothing races the commit. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.renewal;
  }
}
