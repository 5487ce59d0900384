import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { NO_HEARTBEAT } from './work-lease.constants';
import {
  SUCCEEDED,
  activeWork,
  at,
  claimedWork,
  completedCheck,
  createdWork,
  startingWork,
  stoppedWork,
  stoppingWork,
  wire,
} from './work-lease.fixtures';
import { claim, fail, heartbeat, recordResult, tokenAccess } from './work-lease.state';
import type { TokenDenialReason, TokenOperation, WorkLease } from './work-lease.types';

const thrownBy = (fn: () => unknown): DomainError | null => {
  try {
    fn();
    return null;
  } catch (e) {
    return e as DomainError;
  }
};

const OPERATIONS: TokenOperation[] = ['heartbeat', 'fail', 'stop', 'result', 'session_read', 'session_write'];
type Expected = 'ok' | TokenDenialReason;
const all = (e: Expected): Expected[] => OPERATIONS.map(() => e);

/** An active check whose lease outlives its 120 s deadline. */
const longLeaseCheck = (): WorkLease =>
  heartbeat(activeWork('healthcheck'), { expectedLastHeartbeat: wire(2), desiredTtlSeconds: 300 }, at(50))
    .next;

// prettier-ignore
const TABLE: Array<[string, () => WorkLease, number, Expected[]]> = [
  //  scenario                                       lease                                    at s   heartbeat, fail, stop, result, session_read, session_write
  ['queued, never claimed',                          () => createdWork('session'),             0,    all('not_acknowledged')],
  ['polled but not acknowledged',                    () => claimedWork('session'),             1,    all('not_acknowledged')],
  ['reclaimed lost lease awaiting its new Ack',      () => claim(activeWork('session'), at(62)).next, 63, all('not_acknowledged')],
  ['starting, live lease',                           () => startingWork('session'),            30,   all('ok')],
  ['starting, lease expired',                        () => startingWork('session'),            61,   all('lease_expired')],
  ['active, live lease',                             () => activeWork('session'),              30,   all('ok')],
  ['active, lease expired',                          () => activeWork('session'),              62,   all('lease_expired')],
  ['stopping, live lease',                           () => stoppingWork('session'),            30,   all('ok')],
  ['stopping, lease ended',                          () => stoppingWork('session'),            62,   all('work_stopped')],
  ['stopped',                                        () => stoppedWork('session'),             4,    all('work_stopped')],
  ['active check at its deadline',                   () => longLeaseCheck(),                   120,  all('work_stopped')],
  ['check inside the 30 s result window',            () => completedCheck(),                   39,
    ['result_retry_only', 'result_retry_only', 'result_retry_only', 'ok', 'result_retry_only', 'result_retry_only']],
  ['check after the result window',                  () => completedCheck(),                   40,
    ['work_stopped', 'work_stopped', 'work_stopped', 'result_window_closed', 'work_stopped', 'work_stopped']],
  ['check cancelled by forced Stop',                 () => stoppedWork('healthcheck'),         4,    all('work_stopped')],
  ['check cancelled by graceful Stop, lease live',   () => stoppingWork('healthcheck'),        30,   all('ok')],
];

describe('tokenAccess: what the per-Work token may do right now', () => {
  describe.each(TABLE)('%s', (_scenario, make, seconds, expected) => {
    it.each(OPERATIONS.map((op, i) => [op, expected[i]] as const))('%s → %s', (operation, outcome) => {
      const access = tokenAccess(make(), at(seconds), operation);
      expect(access.allowed ? 'ok' : access.reason).toBe(outcome);
    });
  });

  it('an expired lease is 412 with current_state on heartbeat, and 401 on every other operation', () => {
    const lease = activeWork('session');
    const onHeartbeat = tokenAccess(lease, at(62), 'heartbeat');
    expect(onHeartbeat.allowed).toBe(false);
    if (onHeartbeat.allowed) return;
    expect(onHeartbeat.error.code).toBe(ErrorCode.PreconditionFailed);
    expect(onHeartbeat.error.details).toEqual({
      current_state: { state: 'active', ttl_seconds: 60, last_heartbeat: wire(2), lease_extended: false },
    });
    for (const operation of OPERATIONS.filter((op) => op !== 'heartbeat')) {
      const access = tokenAccess(lease, at(62), operation);
      expect(access.allowed ? null : access.error.code).toBe(ErrorCode.Authentication);
    }
  });

  it('every other denial is 401, whatever the operation', () => {
    for (const [, make, seconds] of TABLE) {
      for (const operation of OPERATIONS) {
        const access = tokenAccess(make(), at(seconds), operation);
        if (access.allowed || access.reason === 'lease_expired') continue;
        expect(access.error.code).toBe(ErrorCode.Authentication);
      }
    }
  });

  it('Heartbeat, Fail and Result reject exactly what tokenAccess denies, with the same error', () => {
    const run: Record<'heartbeat' | 'fail' | 'result', (lease: WorkLease, now: Date) => unknown> = {
      heartbeat: (lease, now) =>
        heartbeat(
          lease,
          { expectedLastHeartbeat: lease.latestHeartbeatAt?.toISOString() ?? NO_HEARTBEAT },
          now,
        ),
      fail: (lease, now) => fail(lease, 'bad input', now),
      result: (lease, now) => recordResult(lease, SUCCEEDED, now),
    };
    for (const [scenario, make, seconds] of TABLE) {
      for (const operation of ['heartbeat', 'fail', 'result'] as const) {
        const lease = make();
        if (operation === 'fail' && lease.kind !== 'session') continue;
        if (operation === 'result' && lease.kind !== 'healthcheck') continue;
        const access = tokenAccess(lease, at(seconds), operation);
        const error = thrownBy(() => run[operation](lease, at(seconds)));
        const label = `${scenario} / ${operation}`;
        if (access.allowed) {
          expect([label, error?.code]).not.toEqual([label, ErrorCode.Authentication]);
        } else {
          expect([label, error?.code, error?.message, error?.details]).toEqual([
            label,
            access.error.code,
            access.error.message,
            access.error.details,
          ]);
        }
      }
    }
  });
});
