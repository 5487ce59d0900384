import { ErrorCode } from '@mango/domain-kernel';
import { NO_HEARTBEAT, RESULT_MESSAGE_MAX } from './work-lease.constants';
import {
  SUCCEEDED,
  activeWork,
  at,
  caught,
  claimedWork,
  completedCheck,
  createdWork,
  expectError,
  startingWork,
  stoppedWork,
  stoppingWork,
  wire,
} from './work-lease.fixtures';
import {
  ack,
  claim,
  heartbeat,
  isClaimable,
  reconcileDeadline,
  recordResult,
  stop,
  tokenAccess,
} from './work-lease.state';
import type { ReportedResult } from './healthcheck-result';
import type { WorkLease } from './work-lease.types';

const FAILED: ReportedResult = { status: 'failed', message: 'workspace file contents did not match' };
const ms = (seconds: number, offsetMs: number): Date => new Date(at(seconds).getTime() + offsetMs);

/** An active check whose lease lasts past its 120 s deadline (heartbeat at 50 s with a 300 s TTL). */
const longLeaseCheck = (): WorkLease =>
  heartbeat(activeWork('healthcheck'), { expectedLastHeartbeat: wire(2), desiredTtlSeconds: 300 }, at(50))
    .next;

describe('recordResult', () => {
  it('Result is only for healthcheck Work (400)', () => {
    expectError(
      () => recordResult(activeWork('session'), SUCCEEDED, at(5)),
      ErrorCode.InvalidRequest,
      /only for healthcheck Work/,
    );
  });

  it.each(['timed_out', 'cancelled', 'bogus'])('a worker cannot report status %p (400)', (status) => {
    const input = { status, message: 'x' } as unknown as ReportedResult;
    expectError(
      () => recordResult(activeWork('healthcheck'), input, at(5)),
      ErrorCode.InvalidRequest,
      /status/,
    );
  });

  it('accepts a 1024-character message and rejects 1025 (400)', () => {
    const long = { status: 'succeeded', message: 'm'.repeat(RESULT_MESSAGE_MAX) } as const;
    expect(recordResult(activeWork('healthcheck'), long, at(5)).result).toEqual(long);
    expectError(
      () => recordResult(activeWork('healthcheck'), { ...long, message: long.message + 'm' }, at(5)),
      ErrorCode.InvalidRequest,
      /1024/,
    );
  });

  it.each([SUCCEEDED, FAILED])(
    'the current active lease commits $status and stops the check in one step',
    (input) => {
      const { next, result, replayed } = recordResult(activeWork('healthcheck'), input, at(10));
      expect(replayed).toBe(false);
      expect(result).toEqual(input);
      expect(next).toMatchObject({
        state: 'stopped',
        stoppedAt: at(10),
        result: input,
        resultRecordedAt: at(10),
      });
    },
  );

  it('a starting check that never heartbeated cannot complete (409) and stays reclaimable', () => {
    const lease = startingWork('healthcheck');
    expectError(() => recordResult(lease, SUCCEEDED, at(5)), ErrorCode.Conflict, /first heartbeat/);
    expect(isClaimable(lease, at(61))).toBe(true);
  });

  it('a Result before Ack is 401', () => {
    expectError(() => recordResult(claimedWork('healthcheck'), SUCCEEDED, at(1)), ErrorCode.Authentication);
  });

  it('a Result from an expired lease is 401, and the check stays reclaimable before its deadline', () => {
    const lease = activeWork('healthcheck');
    expectError(() => recordResult(lease, SUCCEEDED, at(62)), ErrorCode.Authentication, /expired/);
    expect(isClaimable(lease, at(62))).toBe(true);
  });

  it('an identical Result retry within 30 s is replayed, a conflicting one is 409', () => {
    const done = completedCheck();
    const retry = recordResult(done, SUCCEEDED, ms(40, -1));
    expect(retry).toEqual({ next: done, result: SUCCEEDED, replayed: true });
    const error = expectError(
      () => recordResult(done, FAILED, at(20)),
      ErrorCode.Conflict,
      /different result/,
    );
    expect(error.details).toEqual({ result: SUCCEEDED });
  });

  it('a retry 30 s or more after the Result is 401: the token is dead', () => {
    expectError(() => recordResult(completedCheck(), SUCCEEDED, at(40)), ErrorCode.Authentication, /window/);
  });

  it("Mango's own timed_out and cancelled results open no retry window", () => {
    const timedOut = reconcileDeadline(activeWork('healthcheck'), at(120)).next;
    expectError(() => recordResult(timedOut, SUCCEEDED, at(121)), ErrorCode.Authentication, /stopped/);
    const cancelled = stoppedWork('healthcheck');
    expectError(() => recordResult(cancelled, SUCCEEDED, at(4)), ErrorCode.Authentication, /stopped/);
  });
});

describe('Stop on a healthcheck', () => {
  it.each([
    ['queued', () => createdWork('healthcheck'), true],
    ['starting', () => startingWork('healthcheck'), false],
    ['active (forced)', () => activeWork('healthcheck'), true],
  ])('Stop of a %s check records cancelled', (_label, make, force) => {
    const { next } = stop(make(), { force }, at(5));
    expect(next).toMatchObject({
      state: 'stopped',
      result: { status: 'cancelled' },
      resultRecordedAt: at(5),
    });
  });

  it('a graceful Stop of an active check records cancelled at once, while the worker is told to cancel', () => {
    const { next } = stop(activeWork('healthcheck'), { force: false }, at(5));
    expect(next).toMatchObject({
      state: 'stopping',
      result: { status: 'cancelled' },
      resultRecordedAt: at(5),
    });
  });

  it("Stop after the worker's Result keeps that result", () => {
    const done = completedCheck();
    expect(stop(done, { force: true }, at(12))).toEqual({ next: done, changed: false });
  });

  it('Stop after the deadline records timed_out, not cancelled', () => {
    const { next, changed } = stop(createdWork('healthcheck'), { force: true }, at(130));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(120), result: { status: 'timed_out' } });
  });
});

describe('healthcheck review cases', () => {
  it('a deadline crossing a Result: at the deadline the Result is rejected and the check is timed_out', () => {
    const lease = longLeaseCheck();
    expectError(() => recordResult(lease, SUCCEEDED, at(120)), ErrorCode.Authentication);
    expect(reconcileDeadline(lease, at(120)).next.result).toMatchObject({ status: 'timed_out' });
  });

  it('a Result one millisecond before the deadline wins, and reconciliation never rewrites it', () => {
    const { next } = recordResult(longLeaseCheck(), SUCCEEDED, ms(120, -1));
    expect(reconcileDeadline(next, at(500))).toEqual({ next, changed: false });
    expect(recordResult(next, SUCCEEDED, at(121)).replayed).toBe(true);
  });

  it('a lost success response: the identical retry returns the stored result and changes nothing', () => {
    const done = completedCheck();
    const { next, result, replayed } = recordResult(done, SUCCEEDED, at(12));
    expect(replayed).toBe(true);
    expect(result).toEqual(SUCCEEDED);
    expect(next).toBe(done);
  });

  it('launch failure before the first heartbeat: the same check is reclaimed before its deadline and can still succeed', () => {
    const launched = startingWork('healthcheck'); // the container never heartbeats
    expect(isClaimable(launched, ms(61, -1))).toBe(false);
    const reclaim = claim(launched, at(61));
    expect(reclaim.reclaimed).toBe(true);
    const retried = ack(reclaim.next, at(62)).next;
    const running = heartbeat(retried, { expectedLastHeartbeat: NO_HEARTBEAT }, at(63)).next;
    expect(recordResult(running, SUCCEEDED, at(70)).next.result).toEqual(SUCCEEDED);
  });

  it('launch failure with nobody left to reclaim: the check becomes timed_out, never a fabricated success', () => {
    const { next } = reconcileDeadline(startingWork('healthcheck'), at(200));
    expect(next).toMatchObject({ state: 'stopped', result: { status: 'timed_out' } });
  });

  it('a cancelled sandbox: after a graceful Stop the Result is 409 and the result stays cancelled', () => {
    const cancelling = stoppingWork('healthcheck');
    expect(tokenAccess(cancelling, at(10), 'result')).toEqual({ allowed: true });
    const error = expectError(
      () => recordResult(cancelling, SUCCEEDED, at(10)),
      ErrorCode.Conflict,
      /cancelled/,
    );
    expect(error.details).toMatchObject({ result: { status: 'cancelled' } });
  });

  it('a cancelled sandbox: after a forced Stop the token is dead and the result stays cancelled', () => {
    const cancelled = stoppedWork('healthcheck');
    expectError(() => recordResult(cancelled, SUCCEEDED, at(4)), ErrorCode.Authentication);
    expect(cancelled.result).toMatchObject({ status: 'cancelled' });
  });

  it("a reclaimed stale claim cannot complete its successor's check before or after the successor's Ack", () => {
    const reclaimed = claim(activeWork('healthcheck'), at(62)).next;
    expect(caught(() => recordResult(reclaimed, SUCCEEDED, at(63))).code).toBe(ErrorCode.Authentication);
    const successorStarting = ack(reclaimed, at(63)).next;
    expect(caught(() => recordResult(successorStarting, SUCCEEDED, at(64))).code).toBe(ErrorCode.Conflict);
  });
});
