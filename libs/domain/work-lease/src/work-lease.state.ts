import { assertNever, conflict, invalidRequest, toWireTime } from '@mango/domain-kernel';
import {
  CANCELLED_RESULT,
  type HealthcheckResult,
  type ReportedResult,
  TIMED_OUT_RESULT,
  isReportedByWorker,
  isSameResult,
  parseReportedResult,
} from './healthcheck-result';
import {
  DEFAULT_RECLAIM_OLDER_THAN_MS,
  DEFAULT_TTL_SECONDS,
  FAIL_MESSAGE_MAX,
  HEALTHCHECK_DEADLINE_MS,
  MAX_TTL_SECONDS,
  MIN_TTL_SECONDS,
  NO_HEARTBEAT,
  RESULT_RETRY_WINDOW_MS,
  STARTING_LEASE_SECONDS,
} from './work-lease.constants';
import { heartbeatPreconditionFailed, refusal } from './token-refusal';
import type {
  HeartbeatInput,
  HeartbeatResponse,
  TokenAccess,
  TokenDenialReason,
  TokenOperation,
  WorkKind,
  WorkLease,
  WorkState,
} from './work-lease.types';

/**
 * The Environment Work lease state machine (docs/api-guide.md, "Environment Work — choices"; ADR 0008).
 *
 *   Poll          Ack              Heartbeat(NO_HEARTBEAT)   graceful Stop     lease end / forced Stop
 *  queued ─────▶ starting ───────▶ active ─────────────────▶ stopping ────────────────────────▶ stopped
 *    ▲              │                │
 *    └──────────────┴────────────────┘ lost lease: Poll reclaims under the same Work id; a new Ack is needed
 *
 *  Each later heartbeat echoes the previous one and renews the active lease. Fail, forced Stop, a
 *  healthcheck Result and the healthcheck deadline stop live Work directly.
 *
 * How to read it:
 * - Every function is pure: `(lease, input, now) → { next, ...outputs }`, or it throws a DomainError.
 *   `next` is a new object; the caller persists it (conditionally, under the row lock).
 * - A lease is live while `now < leaseExpiresAt`. A healthcheck is overdue once `now ≥ expiresAt`.
 * - Every operation first applies `reconcileDeadline`, so an overdue healthcheck or a stopping item whose
 *   lease ran out is already `stopped` when the rules look at it. Reconciliation is deterministic (it
 *   stops the item at the instant it ended, not at `now`), so when an operation is rejected and its
 *   transaction rolls back, nothing is lost: the next touch reconciles to the same facts.
 * - Heartbeat, Fail and Result are authenticated by the per-Work token; their rejections are exactly
 *   `tokenAccess`'s answers (see TokenDenialReason for the 401 / 412 mapping), then their own rules.
 */

const after = (d: Date, ms: number): Date => new Date(d.getTime() + ms);
const isLeaseLive = (lease: WorkLease, now: Date): boolean =>
  lease.leaseExpiresAt !== null && now.getTime() < lease.leaseExpiresAt.getTime();
const isOverdue = (lease: WorkLease, now: Date): boolean =>
  lease.expiresAt !== null && now.getTime() >= lease.expiresAt.getTime();
/** What the worker must echo as `expected_last_heartbeat` next. */
const lastHeartbeatOnWire = (lease: WorkLease): string =>
  lease.latestHeartbeatAt === null ? NO_HEARTBEAT : toWireTime(lease.latestHeartbeatAt);

// ── Creation ──────────────────────────────────────────────────────────────────────────────────────

/** Session Work: queued, no deadline, no result. (`now` is unused: Session Work has no deadline.) */
export function createSessionWork(_now: Date): WorkLease {
  return newWork('session', null);
}

/** A healthcheck: queued, `expiresAt = now + 120 s`, `result: null`. Each call is a new check. */
export function createHealthcheck(now: Date): WorkLease {
  return newWork('healthcheck', after(now, HEALTHCHECK_DEADLINE_MS));
}

function newWork(kind: WorkKind, expiresAt: Date | null): WorkLease {
  return {
    kind,
    state: 'queued',
    claimedAt: null,
    acknowledgedAt: null,
    startedAt: null,
    latestHeartbeatAt: null,
    leaseExpiresAt: null,
    ttlSeconds: null,
    stopRequestedAt: null,
    stoppedAt: null,
    expiresAt,
    result: null,
    resultRecordedAt: null,
  };
}

// ── Lazy reconciliation ───────────────────────────────────────────────────────────────────────────

/**
 * Stops what has already ended by itself: an overdue healthcheck (→ `timed_out` at `expiresAt`, unless
 * Stop already recorded `cancelled`) and a `stopping` item whose lease ran out (→ stopped at
 * `leaseExpiresAt`). There is no background timer: Get, List, Poll, Ack, Heartbeat, Result, Stop and
 * Stats call this, and every function below calls it first.
 */
export function reconcileDeadline(lease: WorkLease, now: Date): { next: WorkLease; changed: boolean } {
  const deadline = isOverdue(lease, now) ? lease.expiresAt : null;
  switch (lease.state) {
    case 'stopped':
      return { next: lease, changed: false };
    case 'queued':
    case 'starting':
    case 'active':
      return deadline ? { next: endedAt(lease, deadline), changed: true } : { next: lease, changed: false };
    case 'stopping': {
      const leaseEnd = isLeaseLive(lease, now) ? null : (lease.leaseExpiresAt ?? now);
      const end = earliest(deadline, leaseEnd);
      return end ? { next: endedAt(lease, end), changed: true } : { next: lease, changed: false };
    }
    default:
      return assertNever(lease.state, 'work state');
  }
}

/** The Work ended by itself at `at`. A healthcheck that has no result yet timed out. */
function endedAt(lease: WorkLease, at: Date): WorkLease {
  const result = lease.kind === 'healthcheck' ? (lease.result ?? TIMED_OUT_RESULT) : null;
  return {
    ...lease,
    state: 'stopped',
    stoppedAt: at,
    result,
    resultRecordedAt: lease.resultRecordedAt ?? (result ? at : null),
  };
}

// ── Poll: claim ───────────────────────────────────────────────────────────────────────────────────

type Claimability = 'unclaimed' | 'stale_claim' | 'lost_lease' | 'not_claimable';

/**
 * Whether Poll may claim the item now. The claim query copies this predicate exactly
 * (then orders oldest first and locks with FOR UPDATE SKIP LOCKED):
 *
 *   (expires_at IS NULL OR expires_at > :now)
 *   AND (
 *        (state = 'queued' AND (claimed_at IS NULL OR claimed_at <= :now - :reclaim_older_than_ms))
 *     OR (state IN ('starting', 'active') AND (lease_expires_at IS NULL OR lease_expires_at <= :now))
 *   )
 */
export function isClaimable(
  lease: WorkLease,
  now: Date,
  reclaimOlderThanMs: number = DEFAULT_RECLAIM_OLDER_THAN_MS,
): boolean {
  return claimability(lease, now, reclaimOlderThanMs) !== 'not_claimable';
}

function claimability(lease: WorkLease, now: Date, reclaimOlderThanMs: number): Claimability {
  if (isOverdue(lease, now)) return 'not_claimable'; // it reconciles to timed_out instead
  switch (lease.state) {
    case 'queued':
      if (lease.claimedAt === null) return 'unclaimed';
      return now.getTime() - lease.claimedAt.getTime() >= reclaimOlderThanMs
        ? 'stale_claim'
        : 'not_claimable';
    case 'starting':
    case 'active':
      return isLeaseLive(lease, now) ? 'not_claimable' : 'lost_lease';
    case 'stopping': // its lease end stops it; it is never handed to another worker
    case 'stopped':
      return 'not_claimable';
    default:
      return assertNever(lease.state, 'work state');
  }
}

/**
 * Poll's tentative claim. Every claim (first or reclaim) is a fresh claim in `queued` under the same
 * Work id: the caller issues a new token and stores its digest, which kills the previous token. A
 * reclaimed lost lease goes back to `queued`, because "the token becomes usable after Ack".
 */
export function claim(
  lease: WorkLease,
  now: Date,
  reclaimOlderThanMs: number = DEFAULT_RECLAIM_OLDER_THAN_MS,
): { next: WorkLease; reclaimed: boolean } {
  if (!Number.isInteger(reclaimOlderThanMs) || reclaimOlderThanMs < 0) {
    throw invalidRequest('reclaim_older_than_ms must be a non-negative integer');
  }
  const how = claimability(lease, now, reclaimOlderThanMs);
  if (how === 'not_claimable') throw conflict('Work is not claimable');
  return {
    next: {
      ...lease,
      state: 'queued',
      claimedAt: now,
      acknowledgedAt: null,
      latestHeartbeatAt: null,
      leaseExpiresAt: null,
      ttlSeconds: null,
    },
    reclaimed: how !== 'unclaimed',
  };
}

// ── Ack ───────────────────────────────────────────────────────────────────────────────────────────

/**
 * Ack (Environment key): the claimed item leaves the queue, `queued → starting`, with a
 * STARTING_LEASE_SECONDS lease in which the worker must send its first heartbeat. Repeating Ack after
 * it succeeded is idempotent. Ack carries no claim identity (no body), so "already acked" is per Work.
 */
export function ack(lease: WorkLease, now: Date): { next: WorkLease; alreadyAcked: boolean } {
  const current = reconcileDeadline(lease, now).next;
  switch (current.state) {
    case 'queued':
      if (current.claimedAt === null) throw conflict('Work has not been claimed; Poll before Ack');
      return {
        next: {
          ...current,
          state: 'starting',
          acknowledgedAt: now,
          leaseExpiresAt: after(now, STARTING_LEASE_SECONDS * 1000),
          ttlSeconds: STARTING_LEASE_SECONDS,
        },
        alreadyAcked: false,
      };
    case 'starting':
    case 'active':
    case 'stopping':
      return { next: current, alreadyAcked: true };
    case 'stopped':
      throw conflict('Work is stopped');
    default:
      return assertNever(current.state, 'work state');
  }
}

// ── Heartbeat ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Heartbeat (Work token). The worker must echo what the server last returned — `NO_HEARTBEAT` while
 * `starting` — so a stale or duplicated owner gets 412. The first heartbeat makes the Work `active`.
 * While `stopping`, a heartbeat is answered but never extends the lease: `lease_extended: false` and
 * `state: "stopping"` tell the worker to cancel, and the token dies when the current lease ends.
 */
export function heartbeat(
  lease: WorkLease,
  input: HeartbeatInput,
  now: Date,
): { next: WorkLease; response: HeartbeatResponse } {
  const ttlSeconds = parseTtl(input.desiredTtlSeconds);
  const current = reconcileDeadline(lease, now).next;
  switch (current.state) {
    case 'queued':
      throw refusal('not_acknowledged', 'heartbeat', current);
    case 'starting':
    case 'active': {
      requireCurrentHeartbeat(current, input.expectedLastHeartbeat, now);
      const next: WorkLease = {
        ...current,
        state: 'active',
        startedAt: current.startedAt ?? now,
        latestHeartbeatAt: now,
        leaseExpiresAt: after(now, ttlSeconds * 1000),
        ttlSeconds,
      };
      return { next, response: heartbeatResponse(next, true) };
    }
    case 'stopping':
      requireCurrentHeartbeat(current, input.expectedLastHeartbeat, now);
      return { next: current, response: heartbeatResponse(current, false) };
    case 'stopped':
      throw refusal(stoppedDenial(current, now), 'heartbeat', current);
    default:
      return assertNever(current.state, 'work state');
  }
}

function parseTtl(desired: number | undefined): number {
  if (desired === undefined) return DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(desired) || desired < MIN_TTL_SECONDS || desired > MAX_TTL_SECONDS) {
    throw invalidRequest(
      `desired_ttl_seconds must be an integer from ${MIN_TTL_SECONDS} through ${MAX_TTL_SECONDS}`,
    );
  }
  return desired;
}

function requireCurrentHeartbeat(current: WorkLease, expected: string, now: Date): void {
  requireLiveLease(current, now, 'heartbeat');
  if (expected !== lastHeartbeatOnWire(current)) {
    throw heartbeatPreconditionFailed(current, 'expected_last_heartbeat does not match the latest heartbeat');
  }
}

const heartbeatResponse = (lease: WorkLease, leaseExtended: boolean): HeartbeatResponse => ({
  last_heartbeat: lastHeartbeatOnWire(lease),
  lease_extended: leaseExtended,
  state: lease.state,
  ttl_seconds: lease.ttlSeconds ?? 0,
});

// ── Stop ──────────────────────────────────────────────────────────────────────────────────────────

/**
 * Stop (Workspace key, or the Work's own token after `tokenAccess(…, 'stop')`). Idempotent: stopping a
 * stopped item changes nothing (the API answers 204 either way). Graceful Stop of `queued`/`starting`
 * stops at once (nothing runs yet); of `active` it asks the worker to cancel via `stopping`. Forced Stop
 * records `stopped` from any live state. A healthcheck's result becomes `cancelled` at the moment of the
 * Stop — unless it already finished or is overdue (then it keeps its result / becomes `timed_out`).
 */
export function stop(
  lease: WorkLease,
  input: { force: boolean },
  now: Date,
): { next: WorkLease; changed: boolean } {
  const reconciled = reconcileDeadline(lease, now);
  const current = reconciled.next;
  switch (current.state) {
    case 'queued':
    case 'starting':
      return { next: { ...stopRequested(current, now), state: 'stopped', stoppedAt: now }, changed: true };
    case 'active':
      return input.force
        ? { next: { ...stopRequested(current, now), state: 'stopped', stoppedAt: now }, changed: true }
        : { next: { ...stopRequested(current, now), state: 'stopping' }, changed: true };
    case 'stopping':
      return input.force
        ? { next: { ...current, state: 'stopped', stoppedAt: now }, changed: true }
        : { next: current, changed: false };
    case 'stopped':
      return reconciled;
    default:
      return assertNever(current.state, 'work state');
  }
}

/** Records the Stop request; a healthcheck without a result is cancelled now, and its result is final. */
function stopRequested(lease: WorkLease, now: Date): WorkLease {
  const cancel = lease.kind === 'healthcheck' && lease.result === null;
  return {
    ...lease,
    stopRequestedAt: lease.stopRequestedAt ?? now,
    result: cancel ? CANCELLED_RESULT : lease.result,
    resultRecordedAt: cancel ? now : lease.resultRecordedAt,
  };
}

// ── Fail ──────────────────────────────────────────────────────────────────────────────────────────

/**
 * Fail (Work token): the permanent-input-error exit of Session Work, from a live lease → stopped. The
 * API layer terminates the Session and its Threads in the same transaction. A healthcheck reports
 * failure with Result instead.
 */
export function fail(lease: WorkLease, message: string, now: Date): { next: WorkLease } {
  if (lease.kind !== 'session') {
    throw invalidRequest('Fail is only for session Work; a healthcheck reports Result');
  }
  if (typeof message !== 'string' || message.length > FAIL_MESSAGE_MAX) {
    throw invalidRequest(`message must be a string of at most ${FAIL_MESSAGE_MAX} characters`);
  }
  const current = reconcileDeadline(lease, now).next;
  switch (current.state) {
    case 'queued':
      throw refusal('not_acknowledged', 'fail', current);
    case 'starting':
    case 'active':
    case 'stopping':
      requireLiveLease(current, now, 'fail');
      return { next: { ...current, state: 'stopped', stoppedAt: now } };
    case 'stopped':
      throw refusal(stoppedDenial(current, now), 'fail', current);
    default:
      return assertNever(current.state, 'work state');
  }
}

// ── Result (healthcheck) ──────────────────────────────────────────────────────────────────────────

/**
 * Result (Work token): only the current `active` lease may complete the check; it commits the
 * immutable result and stops the Work in one step. A `starting` item must heartbeat first (409). The
 * worker may retry the identical Result for 30 s (`replayed: true`); a different one is 409; after 30 s
 * the token is dead (401). A Result arriving at or after the deadline finds the check `timed_out`.
 */
export function recordResult(
  lease: WorkLease,
  input: ReportedResult,
  now: Date,
): { next: WorkLease; result: HealthcheckResult; replayed: boolean } {
  if (lease.kind !== 'healthcheck') throw invalidRequest('Result is only for healthcheck Work');
  const reported = parseReportedResult(input);
  const current = reconcileDeadline(lease, now).next;
  switch (current.state) {
    case 'queued':
      throw refusal('not_acknowledged', 'result', current);
    case 'starting':
      requireLiveLease(current, now, 'result');
      throw conflict(
        'a healthcheck Result needs an active lease: send the first heartbeat before the Result',
      );
    case 'active':
      requireLiveLease(current, now, 'result');
      return {
        next: { ...current, state: 'stopped', stoppedAt: now, result: reported, resultRecordedAt: now },
        result: reported,
        replayed: false,
      };
    case 'stopping': // Stop already recorded `cancelled`, which is final
      requireLiveLease(current, now, 'result');
      throw conflict('the healthcheck was cancelled; its result cannot change', { result: current.result });
    case 'stopped': {
      const stored = retryableResult(current, now);
      if (stored === null) throw refusal(closedWindowDenial(current), 'result', current);
      if (!isSameResult(stored, reported)) {
        throw conflict('a different result is already recorded for this healthcheck', { result: stored });
      }
      return { next: current, result: stored, replayed: true };
    }
    default:
      return assertNever(current.state, 'work state');
  }
}

// ── Token access ──────────────────────────────────────────────────────────────────────────────────

/**
 * What the per-Work token may do right now (after its digest matched). Unusable before Ack; valid while
 * `starting`/`active`/`stopping` with a live lease; dead once the Work stops or the lease expires. In the
 * 30 s after its own Result, a healthcheck token may only retry that Result. Which Work or Session the
 * token may touch is the route's check; this answers only *when*. Denial → error: see TokenDenialReason.
 */
export function tokenAccess(lease: WorkLease, now: Date, operation: TokenOperation): TokenAccess {
  const current = reconcileDeadline(lease, now).next;
  const reason = tokenDenial(current, now, operation);
  return reason === null
    ? { allowed: true }
    : { allowed: false, reason, error: refusal(reason, operation, current) };
}

function tokenDenial(current: WorkLease, now: Date, operation: TokenOperation): TokenDenialReason | null {
  switch (current.state) {
    case 'queued':
      return 'not_acknowledged';
    case 'starting':
    case 'active':
    case 'stopping':
      return isLeaseLive(current, now) ? null : 'lease_expired';
    case 'stopped':
      if (operation !== 'result') return stoppedDenial(current, now);
      return retryableResult(current, now) ? null : closedWindowDenial(current);
    default:
      return assertNever(current.state, 'work state');
  }
}

/** Inside the 30 s after the worker's own Result: that stored Result; otherwise null. */
function retryableResult(current: WorkLease, now: Date): HealthcheckResult | null {
  const { result, resultRecordedAt } = current;
  if (result === null || resultRecordedAt === null || !isReportedByWorker(result)) return null;
  return now.getTime() < resultRecordedAt.getTime() + RESULT_RETRY_WINDOW_MS ? result : null;
}

/** A stopped Work's token may do nothing but retry its Result, and only inside the window. */
function stoppedDenial(current: WorkLease, now: Date): 'result_retry_only' | 'work_stopped' {
  return retryableResult(current, now) ? 'result_retry_only' : 'work_stopped';
}

/** A Result retry outside the window: too late after the worker's Result, or the check ended otherwise. */
function closedWindowDenial(current: WorkLease): 'result_window_closed' | 'work_stopped' {
  return current.result && isReportedByWorker(current.result) ? 'result_window_closed' : 'work_stopped';
}

function requireLiveLease(current: WorkLease, now: Date, operation: TokenOperation): void {
  if (!isLeaseLive(current, now)) throw refusal('lease_expired', operation, current);
}

function earliest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}

// ── The one-statement claim and Ack: their SQL is built from these ────────────────────────────────

/** Every Work state, in lifecycle order. */
export const WORK_STATES: readonly WorkState[] = ['queued', 'starting', 'active', 'stopping', 'stopped'];

const PROBE_NOW = new Date(10_000_000);
const PROBE_PAST = new Date(0);

/**
 * Which states Poll may claim from, computed from this state machine (not restated): `unclaimed` — states
 * in which a never-claimed item is claimable; `staleClaim` — states in which a tentative claim older than
 * `reclaim_older_than_ms` is claimable; `lostLease` — states in which an item whose lease ran out is
 * claimable. The one-statement claim (libs/persistence `work-item.repository.ts`) puts exactly these
 * into its SQL; an overdue item is never claimable (it reconciles instead).
 */
export function claimSources(): { unclaimed: WorkState[]; staleClaim: WorkState[]; lostLease: WorkState[] } {
  const probe = (state: WorkState, claimedAt: Date | null, leaseExpiresAt: Date | null): WorkLease => ({
    ...newWork('session', null),
    state,
    claimedAt,
    acknowledgedAt: state === 'queued' ? null : PROBE_PAST,
    leaseExpiresAt: state === 'queued' ? null : leaseExpiresAt,
  });
  const where = (how: Claimability, lease: (s: WorkState) => WorkLease) =>
    WORK_STATES.filter((s) => claimability(lease(s), PROBE_NOW, 1) === how);
  return {
    unclaimed: where('unclaimed', (s) => probe(s, null, null)),
    staleClaim: where('stale_claim', (s) => probe(s, PROBE_PAST, null)),
    lostLease: where('lost_lease', (s) => probe(s, PROBE_PAST, PROBE_PAST)),
  };
}

/**
 * The states from which Ack makes a real transition (not an idempotent repeat), computed by probing
 * `ack()` with a claimed, not overdue item; and the lease it starts. The one-statement Ack applies them.
 */
export function ackTransition(): { from: WorkState[]; to: WorkState; leaseSeconds: number } {
  const from = WORK_STATES.filter((state) => {
    try {
      const lease: WorkLease = {
        ...newWork('session', null),
        state,
        claimedAt: PROBE_PAST,
        acknowledgedAt: state === 'queued' ? null : PROBE_PAST,
        leaseExpiresAt: state === 'queued' ? null : PROBE_NOW,
        stoppedAt: state === 'stopped' ? PROBE_PAST : null,
      };
      return !ack(lease, PROBE_NOW).alreadyAcked;
    } catch {
      return false;
    }
  });
  return { from, to: 'starting', leaseSeconds: STARTING_LEASE_SECONDS };
}
