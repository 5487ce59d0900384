import { DomainError, ErrorCode, assertNever, toWireTimeOrNull, unauthenticated } from '@mango/domain-kernel';
import type { TokenDenialReason, TokenOperation, WorkLease } from './work-lease.types';

/** The single place a token denial becomes an error: all 401, except an expired lease on heartbeat (412). */
export function refusal(
  reason: TokenDenialReason,
  operation: TokenOperation,
  current: WorkLease,
): DomainError {
  switch (reason) {
    case 'not_acknowledged':
      return unauthenticated('the Work token is not usable until the Work is acknowledged');
    case 'lease_expired':
      return operation === 'heartbeat'
        ? heartbeatPreconditionFailed(current, 'the Work lease has expired')
        : unauthenticated('the Work lease has expired');
    case 'work_stopped':
      return unauthenticated('the Work is stopped');
    case 'result_retry_only':
      return unauthenticated('after its Result, the Work token may only retry that Result');
    case 'result_window_closed':
      return unauthenticated('the Result retry window has closed');
    default:
      return assertNever(reason, 'token denial');
  }
}

/** 412 with the lease as the server sees it, so the worker knows it lost the lease. */
export function heartbeatPreconditionFailed(current: WorkLease, message: string): DomainError {
  return new DomainError(ErrorCode.PreconditionFailed, message, {
    current_state: {
      state: current.state,
      ttl_seconds: current.ttlSeconds,
      last_heartbeat: toWireTimeOrNull(current.latestHeartbeatAt),
      lease_extended: false,
    },
  });
}
