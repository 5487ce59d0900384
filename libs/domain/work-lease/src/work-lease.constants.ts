/** Timing and size limits of Environment Work (docs/api-guide.md, "Environment Work — choices"). */

/** A healthcheck's absolute deadline: `expiresAt = created + 120 s`. */
export const HEALTHCHECK_DEADLINE_MS = 120_000;

/** After a worker's Result, its token may retry that identical Result for 30 s, and do nothing else. */
export const RESULT_RETRY_WINDOW_MS = 30_000;

/** Poll's default `reclaim_older_than_ms`: a polled-but-unacknowledged claim older than this is reclaimable. */
export const DEFAULT_RECLAIM_OLDER_THAN_MS = 5_000;

/** Heartbeat `desired_ttl_seconds`: default and the inclusive 1–300 range. */
export const DEFAULT_TTL_SECONDS = 60;
export const MIN_TTL_SECONDS = 1;
export const MAX_TTL_SECONDS = 300;

/**
 * The lease an Ack grants before the first heartbeat. 60 s because:
 * - it covers the Docker launcher's 30 s container-attempt bound with margin, and the item process
 *   heartbeats before any slow setup, so a healthy launch always heartbeats well inside it;
 * - it equals the default heartbeat TTL, so a worker sees one lease length throughout;
 * - it is short enough that a launch failure before the first heartbeat becomes reclaimable while a
 *   healthcheck still has time for a second attempt (Ack at ~0–5 s, reclaimable at ~65 s, the 10 s probe
 *   can still finish before the 120 s deadline).
 */
export const STARTING_LEASE_SECONDS = 60;

/** Upper bounds, in characters (UTF-16 code units, as the kernel's metadata rules count them). */
export const RESULT_MESSAGE_MAX = 1024;
export const FAIL_MESSAGE_MAX = 1024;

/** The `expected_last_heartbeat` of a worker's first heartbeat. */
export const NO_HEARTBEAT = 'NO_HEARTBEAT';
