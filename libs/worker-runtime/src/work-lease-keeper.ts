import {
  AuthenticationError,
  ConnectionError,
  isRetryableStatus,
  MangoClient,
  MangoError,
  PreconditionFailedError,
} from '@mango/sdk';
import { backoffMs, sleep } from './backoff';

export interface WorkLeaseKeeperOptions {
  client: MangoClient; // bound to the Work token
  environmentId: string;
  workId: string;
  ttlSeconds?: number;
  /**
   * Called once when the lease is lost (412/401) or may have expired unrenewed (the fence): the runner
   * must stop and post nothing more.
   */
  onLost: (reason: string) => void;
  /** Called when the server says `stopping`: the runner should cancel and tear down. */
  onStopRequested: () => void;
  /** How long a first heartbeat that failed transiently is retried (default {@link FIRST_BEAT_RETRY_MS}). */
  firstBeatRetryMs?: number;
}

/**
 * How long the first heartbeat is retried while the API answers 5xx/408/429 or cannot be reached: half the
 * 60 s starting lease Ack grants (STARTING_LEASE_SECONDS), leaving the rest for the time between Ack and
 * this runner's start. A PostgreSQL restart of a second or two made the API answer 503 to a first
 * heartbeat, and the runner gave the item up to wait out a whole lease TTL (the fault matrix's PostgreSQL
 * restart row, 60 s instead of ~5 s).
 */
export const FIRST_BEAT_RETRY_MS = 30_000;

/** A failure worth retrying: no response, or a status the server may answer differently soon. */
const transient = (err: unknown): boolean =>
  err instanceof ConnectionError ||
  (err instanceof MangoError && err.status !== undefined && isRetryableStatus(err.status));

/** The longest pause between retries of a failed heartbeat: a Work API socket served again is found soon. */
const RETRY_MAX_MS = 2_000;

/**
 * Conditional heartbeats (see docs/operator-guide.md, The Docker supervisor): the first says NO_HEARTBEAT, every later one echoes the previous
 * `last_heartbeat`. Renews at a third of the TTL. A failed renewal (the API or the supervisor's Work API
 * socket unreachable — e.g. a supervisor restarting, which adopts this container) is retried with backoff
 * for as long as the lease it renews can still be alive: until the TTL has passed since the last renewal
 * was sent. After that the lease may have expired and another worker may hold the Work, so the keeper
 * fences itself: `onLost`, and the runner stops its command (queue reclaim retries the activation
 * elsewhere); 412/401 mean it is lost.
 */
export class WorkLeaseKeeper {
  private last = 'NO_HEARTBEAT';
  /** When the last renewing heartbeat was sent: the server's lease runs at least its TTL from then. */
  private renewedAt = 0;
  private grantedMs = 0;
  private readonly stop = new AbortController();
  private loop?: Promise<void>;
  lost = false;

  constructor(private readonly o: WorkLeaseKeeperOptions) {}

  /** The lease TTL: how long a result may still be retried. */
  get ttlMs(): number {
    return (this.o.ttlSeconds ?? 60) * 1000;
  }

  /**
   * The first heartbeat (`starting` → `active`); throws if it is refused, or still failing transiently
   * after {@link FIRST_BEAT_RETRY_MS}. A retry is safe: the heartbeat is conditional, so one sent after
   * the server took an earlier attempt answers 412, and a reclaimed item's old token 401 (not retried).
   */
  async start(): Promise<void> {
    const deadline = Date.now() + (this.o.firstBeatRetryMs ?? FIRST_BEAT_RETRY_MS);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.beat();
        break;
      } catch (err) {
        const left = deadline - Date.now();
        if (!transient(err) || left <= 0) throw err;
        await sleep(Math.min(backoffMs(attempt, { maxMs: RETRY_MAX_MS }), left));
      }
    }
    this.loop = this.run();
  }

  private async beat(): Promise<void> {
    const sentAt = Date.now();
    const res = await this.o.client.environments.work.heartbeat(
      this.o.environmentId,
      this.o.workId,
      { expected_last_heartbeat: this.last, desired_ttl_seconds: this.o.ttlSeconds ?? 60 },
      { maxRetries: 0 },
    );
    this.last = res.last_heartbeat;
    if (res.lease_extended !== false) {
      this.renewedAt = sentAt;
      this.grantedMs = res.ttl_seconds > 0 ? res.ttl_seconds * 1000 : this.ttlMs;
    }
    if (res.state === 'stopping') this.o.onStopRequested();
  }

  private async run(): Promise<void> {
    const interval = this.ttlMs / 3;
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
          const left = this.renewedAt + this.grantedMs - Date.now();
          if (left <= 0) {
            // Fenced: the lease may have expired (the server counts its TTL from a receive no earlier than
            // our send), so another worker may claim the Work: stop now rather than run beside it.
            this.lost = true;
            this.o.onLost('lease not renewed before it could expire');
            return;
          }
          await sleep(Math.min(backoffMs(attempt, { maxMs: RETRY_MAX_MS }), left), this.stop.signal);
          if (this.stop.signal.aborted) return;
        }
      }
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
  }
}
