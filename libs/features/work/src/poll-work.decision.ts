import type { WorkState } from '@mango/domain-work-lease';

/** How a claim relates to the item's previous claims (the claim span and metrics label). */
export type ReclaimKind = 'none' | 'tentative' | 'lease_expired';

/** A lost `starting`/`active` lease, a stale tentative claim (claimed, never Acked), or a first claim. */
export function reclaimKindOf(item: { state: WorkState; claimedAt: Date | null }): ReclaimKind {
  if (item.state === 'starting' || item.state === 'active') return 'lease_expired';
  return item.claimedAt ? 'tentative' : 'none';
}

/** What one attempt of the Poll loop found. */
export interface PollAttempt {
  /** Whether the attempt claimed an item. */
  claimed: boolean;
  /** When nothing was claimable: ms until an item becomes claimable by time alone (undefined: none). */
  nextWakeMs?: number;
}

export type PollStep =
  | { readonly kind: 'return_work' }
  | { readonly kind: 'return_empty' }
  | { readonly kind: 'wait'; readonly ms: number };

/**
 * The Poll long-poll loop's decision after one attempt: a claim returns at once; otherwise, with time
 * left and a NOTIFY subscription (block_ms > 0), wait until NOTIFY or the moment the next item becomes
 * claimable, whichever is first, but never past the deadline; else return `{}`. Never a fixed sleep.
 */
export function nextPollStep(attempt: PollAttempt, remainingMs: number, blocking: boolean): PollStep {
  if (attempt.claimed) return { kind: 'return_work' };
  if (remainingMs <= 0 || !blocking) return { kind: 'return_empty' };
  return { kind: 'wait', ms: Math.min(remainingMs, attempt.nextWakeMs ?? remainingMs) };
}
