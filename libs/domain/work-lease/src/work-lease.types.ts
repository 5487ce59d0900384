import type { DomainError } from '@mango/domain-kernel';
import type { HealthcheckResult } from './healthcheck-result';

/** queued → starting (Ack) → active (first heartbeat) → stopping (graceful Stop) → stopped. */
export type WorkState = 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';

export type WorkKind = 'session' | 'healthcheck';

/**
 * The persisted facts of one Work item that the lease rules need. Ids, the Session link, metadata and
 * the token digest live beside these facts in the repository; the rules never see a secret.
 *
 * Invariants the state machine keeps:
 * - `queued`: `acknowledgedAt`, `latestHeartbeatAt`, `leaseExpiresAt`, `ttlSeconds` are null;
 *   `claimedAt` is null until a Poll claims it (then it is a tentative claim awaiting Ack).
 * - `starting` / `active` / `stopping`: `claimedAt`, `acknowledgedAt`, `leaseExpiresAt`, `ttlSeconds` are set.
 * - `active` / `stopping`: `latestHeartbeatAt` and `startedAt` are set.
 * - `stopped`: `stoppedAt` is set. A stopped healthcheck always has a `result`.
 */
export interface WorkLease {
  readonly kind: WorkKind;
  readonly state: WorkState;
  /** The latest Poll claim (each claim or reclaim issues a new token); null if not claimed. */
  readonly claimedAt: Date | null;
  /** The Ack of the current claim; null while queued. */
  readonly acknowledgedAt: Date | null;
  /** The first heartbeat ever (kept across reclaims). */
  readonly startedAt: Date | null;
  /** The latest accepted heartbeat of the current claim; its `toISOString()` is what the worker echoes. */
  readonly latestHeartbeatAt: Date | null;
  /** The current claim's lease is live while `now < leaseExpiresAt`. */
  readonly leaseExpiresAt: Date | null;
  readonly ttlSeconds: number | null;
  readonly stopRequestedAt: Date | null;
  readonly stoppedAt: Date | null;
  /** Healthcheck absolute deadline (created + 120 s); null for Session Work. */
  readonly expiresAt: Date | null;
  /** Healthcheck outcome; always null for Session Work. */
  readonly result: HealthcheckResult | null;
  readonly resultRecordedAt: Date | null;
}

/** What a per-Work token (`sessions_token`) is presented for. `session_write` = tool results, memory writes. */
export type TokenOperation = 'heartbeat' | 'fail' | 'stop' | 'result' | 'session_read' | 'session_write';

/**
 * Why a token is refused right now. Every reason is 401 `authentication_error`, except `lease_expired`
 * on `heartbeat`, which is 412 `heartbeat_precondition_failed` ("a stale timestamp or expired current
 * lease returns 412"; docs/api-guide.md, "Environment Work — choices").
 * - not_acknowledged: the claim has not been Acked (this includes a reclaimed lost lease awaiting its new Ack).
 * - lease_expired: the Work is live but the current lease ran out.
 * - work_stopped: the Work is stopped (Stop, Fail, deadline, or a closed result window for non-result ops).
 * - result_retry_only: inside the 30 s window after a Result, where only that Result may be retried.
 * - result_window_closed: a Result retry arriving 30 s or more after the Result.
 * A reclaimed claim's old token never reaches these rules: reclaim rotates the stored digest, so the
 * old token fails the digest lookup (401) before the lease is consulted.
 */
export type TokenDenialReason =
  'not_acknowledged' | 'lease_expired' | 'work_stopped' | 'result_retry_only' | 'result_window_closed';

export type TokenAccess =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly reason: TokenDenialReason; readonly error: DomainError };

export interface HeartbeatInput {
  /** `NO_HEARTBEAT` for the first heartbeat, then the previous response's `last_heartbeat` verbatim. */
  readonly expectedLastHeartbeat: string;
  /** 1–300; DEFAULT_TTL_SECONDS when omitted. */
  readonly desiredTtlSeconds?: number;
}

/** The wire body (the controller adds `type: "work_heartbeat"`). */
export interface HeartbeatResponse {
  readonly last_heartbeat: string;
  readonly lease_extended: boolean;
  readonly state: WorkState;
  readonly ttl_seconds: number;
}
