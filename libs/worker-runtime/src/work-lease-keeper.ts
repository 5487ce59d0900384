import { AuthenticationError, MangoClient, PreconditionFailedError } from '@mango/sdk';
import { backoffMs, sleep } from './backoff';

export interface WorkLeaseKeeperOptions {
  client: MangoClient; // bound to the Work token
  environmentId: string;
  workId: string;
  ttlSeconds?: number;
  /** Called once when the lease is lost (412/401): the runner must stop and post nothing more. */
  onLost: (reason: string) => void;
  /** Called when the server says `stopping`: the runner should cancel and tear down. */
  onStopRequested: () => void;
}

/**
 * Conditional heartbeats (see docs/operator-guide.md, The Docker supervisor): the first says NO_HEARTBEAT, every later one echoes the previous
 * `last_heartbeat`. Renews at a third of the TTL; transient errors are retried five times within the
 * lease, after which the lease is left to expire (queue reclaim retries the activation).
 */
export class WorkLeaseKeeper {
  private last = 'NO_HEARTBEAT';
  private readonly stop = new AbortController();
  private loop?: Promise<void>;
  lost = false;

  constructor(private readonly o: WorkLeaseKeeperOptions) {}

  /** The lease TTL: how long a result may still be retried. */
  get ttlMs(): number {
    return (this.o.ttlSeconds ?? 60) * 1000;
  }

  /** The first heartbeat (`starting` → `active`); throws if it is refused. */
  async start(): Promise<void> {
    await this.beat();
    this.loop = this.run();
  }

  private async beat(): Promise<void> {
    const res = await this.o.client.environments.work.heartbeat(
      this.o.environmentId,
      this.o.workId,
      { expected_last_heartbeat: this.last, desired_ttl_seconds: this.o.ttlSeconds ?? 60 },
      { maxRetries: 0 },
    );
    this.last = res.last_heartbeat;
    if (res.state === 'stopping') this.o.onStopRequested();
  }

  private async run(): Promise<void> {
    const interval = ((this.o.ttlSeconds ?? 60) * 1000) / 3;
    while (!this.stop.signal.aborted) {
      await sleep(interval, this.stop.signal);
      if (this.stop.signal.aborted) return;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.beat();
          break;
        } catch (err) {
          if (err instanceof PreconditionFailedError || err instanceof AuthenticationError) {
            this.lost = true;
            this.o.onLost(
              err instanceof PreconditionFailedError ? 'lease precondition failed' : 'token no longer valid',
            );
            return;
          }
          if (attempt >= 4) return; // five tries: leave the lease to expire
          await sleep(backoffMs(attempt), this.stop.signal);
        }
      }
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
  }
}
