import {
  AuthenticationError,
  MangoClient,
  MangoError,
  NotFoundError,
  PermissionDeniedError,
  PolledWork,
  RedactedWork,
} from '@mango/sdk';
import { backoffMs, sleep } from './backoff';

export interface AcknowledgedWork {
  /** The item as Ack returned it (`starting`). */
  work: RedactedWork;
  /** The raw secret from Poll, kept in memory only to hand to the launcher. */
  secret: string;
}

export interface WorkPollerOptions {
  client: MangoClient;
  environmentId: string;
  workerId: string;
  blockMs?: number;
  reclaimOlderThanMs?: number;
  signal: AbortSignal;
  onError?: (err: unknown, attempt: number) => void;
  /**
   * Awaited before each Poll; resolves with that Poll's `block_ms` (else `blockMs`). A consumer with no
   * free slot waits here, or asks for a Poll that returns at once when it could make room.
   */
  beforePoll?: () => Promise<number | undefined>;
  /** Awaited between Poll and Ack (e.g. to free a slot); false leaves the claim unacknowledged. */
  beforeAck?: () => Promise<boolean>;
}

/**
 * Poll → Ack as an async iterator (docs/operator-guide.md, The Docker supervisor). Transient failures back off with jitter and
 * retry; an authentication, permission or not-found answer is fatal (the key was revoked or the
 * Environment is gone) and ends the iteration with that error. Stopping the signal drains: no new Poll
 * starts, and an item polled but not yet acked is left to be reclaimed.
 */
export async function* pollWork(o: WorkPollerOptions): AsyncGenerator<AcknowledgedWork> {
  let failures = 0;
  while (!o.signal.aborted) {
    const blockMs = (await o.beforePoll?.()) ?? o.blockMs ?? 10_000;
    if (o.signal.aborted) return;
    let polled: PolledWork | null;
    try {
      polled = await o.client.environments.work.poll(
        o.environmentId,
        { block_ms: blockMs, reclaim_older_than_ms: o.reclaimOlderThanMs, worker_id: o.workerId },
        { signal: o.signal, maxRetries: 0 },
      );
    } catch (err) {
      if (o.signal.aborted) return;
      if (isFatal(err)) throw err;
      o.onError?.(err, failures);
      await sleep(backoffMs(failures++), o.signal);
      continue;
    }
    failures = 0;
    if (!polled) continue;
    if (o.signal.aborted) return; // drain: never Ack what we will not run
    // Not acknowledged: the claim is polled again after reclaim_older_than_ms.
    if (o.beforeAck && !(await o.beforeAck())) continue;
    if (o.signal.aborted) return;
    try {
      const work = await o.client.environments.work.ack(o.environmentId, polled.id, { maxRetries: 2 });
      yield { work, secret: polled.secret };
    } catch (err) {
      if (isFatal(err) && !(err instanceof NotFoundError)) throw err;
      o.onError?.(err, 0); // the unacked claim will be reclaimed after reclaim_older_than_ms
    }
  }
}

function isFatal(err: unknown): boolean {
  return (
    err instanceof AuthenticationError ||
    err instanceof PermissionDeniedError ||
    err instanceof NotFoundError ||
    (err instanceof MangoError && err.status === 400)
  );
}
