import type { WorkLease } from '@mango/domain-work-lease';
import type { WorkItemEntity } from './entities';

/** The lease facts of a row, for the pure state machine. */
export function toLease(row: WorkItemEntity): WorkLease {
  return {
    kind: row.kind,
    state: row.state,
    claimedAt: row.claimedAt,
    acknowledgedAt: row.acknowledgedAt,
    startedAt: row.startedAt,
    latestHeartbeatAt: row.latestHeartbeatAt,
    leaseExpiresAt: row.leaseExpiresAt,
    ttlSeconds: row.ttlSeconds,
    stopRequestedAt: row.stopRequestedAt,
    stoppedAt: row.stoppedAt,
    expiresAt: row.expiresAt,
    result: row.result,
    resultRecordedAt: row.resultRecordedAt,
  };
}

/** The columns a transition may change (everything but identity, metadata and the token). */
export function leaseColumns(lease: WorkLease): Partial<WorkItemEntity> {
  return {
    state: lease.state,
    claimedAt: lease.claimedAt,
    acknowledgedAt: lease.acknowledgedAt,
    startedAt: lease.startedAt,
    latestHeartbeatAt: lease.latestHeartbeatAt,
    leaseExpiresAt: lease.leaseExpiresAt,
    ttlSeconds: lease.ttlSeconds,
    stopRequestedAt: lease.stopRequestedAt,
    stoppedAt: lease.stoppedAt,
    result: lease.result ? { status: lease.result.status, message: lease.result.message } : null,
    resultRecordedAt: lease.resultRecordedAt,
  };
}
