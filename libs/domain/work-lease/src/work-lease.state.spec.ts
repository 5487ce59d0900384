import { ErrorCode } from '@mango/domain-kernel';
import {
  DEFAULT_TTL_SECONDS,
  FAIL_MESSAGE_MAX,
  NO_HEARTBEAT,
  STARTING_LEASE_SECONDS,
} from './work-lease.constants';
import {
  KINDS,
  T0,
  activeWork,
  at,
  claimedWork,
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
  createHealthcheck,
  createSessionWork,
  fail,
  heartbeat,
  isClaimable,
  reconcileDeadline,
  stop,
  tokenAccess,
} from './work-lease.state';
import type { WorkLease } from './work-lease.types';

describe('creation', () => {
  it('a healthcheck is queued, unclaimed, with expires_at 120 s after creation and no result', () => {
    const check = createHealthcheck(T0);
    expect(check).toMatchObject({ kind: 'healthcheck', state: 'queued', claimedAt: null, result: null });
    expect(check.expiresAt).toEqual(at(120));
  });

  it('Session Work is queued with null expiry and null result', () => {
    expect(createSessionWork(T0)).toMatchObject({
      kind: 'session',
      state: 'queued',
      expiresAt: null,
      result: null,
    });
  });
});

describe('reconcileDeadline (lazy, no background timer)', () => {
  it.each([
    ['queued', () => createdWork('healthcheck')],
    ['claimed', () => claimedWork('healthcheck')],
    ['starting', () => startingWork('healthcheck')],
    ['active', () => activeWork('healthcheck')],
  ])('an overdue %s healthcheck becomes stopped/timed_out, stopped at its deadline', (_label, make) => {
    const { next, changed } = reconcileDeadline(make(), at(500));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(120), resultRecordedAt: at(120) });
    expect(next.result).toEqual({
      status: 'timed_out',
      message: 'Healthcheck did not complete within 120 seconds',
    });
  });

  it('reconciliation is deterministic: the same facts whenever it runs after the deadline', () => {
    const lease = activeWork('healthcheck');
    expect(reconcileDeadline(lease, at(120)).next).toEqual(reconcileDeadline(lease, at(9000)).next);
  });

  it('a healthcheck one millisecond before its deadline is unchanged', () => {
    const lease = createdWork('healthcheck');
    expect(reconcileDeadline(lease, new Date(at(120).getTime() - 1))).toEqual({
      next: lease,
      changed: false,
    });
  });

  it('a stopping item whose lease ran out becomes stopped at the lease end', () => {
    const { next, changed } = reconcileDeadline(stoppingWork('session'), at(70));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(62), result: null });
  });

  it('a stopping healthcheck keeps its cancelled result when its lease ends', () => {
    const { next } = reconcileDeadline(stoppingWork('healthcheck'), at(70));
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(62), result: { status: 'cancelled' } });
  });

  it('a stopping item with a live lease is unchanged', () => {
    const lease = stoppingWork('session');
    expect(reconcileDeadline(lease, at(61))).toEqual({ next: lease, changed: false });
  });

  it('Session Work never times out, and its lost lease is left for reclaim', () => {
    const lease = activeWork('session');
    expect(reconcileDeadline(lease, at(10_000))).toEqual({ next: lease, changed: false });
  });

  it.each(KINDS)('stopped %s Work is never changed', (kind) => {
    const lease = stoppedWork(kind);
    expect(reconcileDeadline(lease, at(10_000))).toEqual({ next: lease, changed: false });
  });
});

describe('claim (Poll)', () => {
  it('an unclaimed queued item is claimed tentatively: still queued, not a reclaim', () => {
    const { next, reclaimed } = claim(createdWork('session'), at(0));
    expect(reclaimed).toBe(false);
    expect(next).toMatchObject({ state: 'queued', claimedAt: at(0), acknowledgedAt: null });
  });

  it('a tentative claim younger than reclaim_older_than_ms is not claimable', () => {
    const lease = claimedWork('session');
    expect(isClaimable(lease, new Date(at(5).getTime() - 1))).toBe(false);
    expectError(() => claim(lease, new Date(at(5).getTime() - 1)), ErrorCode.Conflict, /not claimable/);
  });

  it('a stale unacknowledged claim (≥ 5 s by default) is reclaimed under the same Work', () => {
    const { next, reclaimed } = claim(claimedWork('session'), at(5));
    expect(reclaimed).toBe(true);
    expect(next).toMatchObject({ state: 'queued', claimedAt: at(5), acknowledgedAt: null });
  });

  it('honours a caller-supplied reclaim_older_than_ms', () => {
    expect(isClaimable(claimedWork('session'), at(2), 2000)).toBe(true);
    expect(claim(claimedWork('session'), at(2), 2000).reclaimed).toBe(true);
    expect(isClaimable(claimedWork('session'), at(2), 2001)).toBe(false);
  });

  it.each([-1, 1.5, Number.NaN])('rejects reclaim_older_than_ms %p', (ms) => {
    expectError(
      () => claim(createdWork('session'), at(0), ms),
      ErrorCode.InvalidRequest,
      /reclaim_older_than_ms/,
    );
  });

  it('a lost starting lease (launch failure before the first heartbeat) is reclaimable at its expiry', () => {
    const lease = startingWork('session');
    expect(isClaimable(lease, new Date(at(61).getTime() - 1))).toBe(false);
    const { next, reclaimed } = claim(lease, at(61));
    expect(reclaimed).toBe(true);
    expect(next).toMatchObject({
      state: 'queued',
      claimedAt: at(61),
      acknowledgedAt: null,
      leaseExpiresAt: null,
    });
  });

  it("a reclaimed lost active lease forgets the old owner's heartbeat but keeps startedAt", () => {
    const { next } = claim(activeWork('session'), at(62));
    expect(next).toMatchObject({
      state: 'queued',
      latestHeartbeatAt: null,
      leaseExpiresAt: null,
      ttlSeconds: null,
      startedAt: at(2),
    });
  });

  it('a reclaimed lost lease needs a new Ack before its token works', () => {
    const reclaimed = claim(activeWork('session'), at(62)).next;
    expect(tokenAccess(reclaimed, at(63), 'session_write')).toMatchObject({
      allowed: false,
      reason: 'not_acknowledged',
    });
    const acked = ack(reclaimed, at(63)).next;
    expect(acked.state).toBe('starting');
    expect(tokenAccess(acked, at(64), 'session_write')).toEqual({ allowed: true });
  });

  it("after a reclaim the old owner's last heartbeat no longer matches (412), even past authentication", () => {
    const successor = ack(claim(activeWork('session'), at(62)).next, at(63)).next;
    expectError(
      () => heartbeat(successor, { expectedLastHeartbeat: wire(2) }, at(64)),
      ErrorCode.PreconditionFailed,
    );
  });

  it.each([
    ['starting', () => startingWork('session')],
    ['active', () => activeWork('session')],
  ])('a %s item with a live lease is not claimable', (_label, make) => {
    expect(isClaimable(make(), at(30))).toBe(false);
    expectError(() => claim(make(), at(30)), ErrorCode.Conflict);
  });

  it('stopping and stopped items are never claimable, even after their lease ran out', () => {
    expect(isClaimable(stoppingWork('session'), at(1000))).toBe(false);
    expect(isClaimable(stoppedWork('session'), at(1000))).toBe(false);
    expectError(() => claim(stoppingWork('session'), at(1000)), ErrorCode.Conflict);
  });

  it('an overdue healthcheck is never claimable, not even if it was never claimed', () => {
    expect(isClaimable(createdWork('healthcheck'), at(119))).toBe(true);
    expect(isClaimable(createdWork('healthcheck'), at(120))).toBe(false);
    expect(isClaimable(activeWork('healthcheck'), at(120))).toBe(false);
    expectError(() => claim(createdWork('healthcheck'), at(120)), ErrorCode.Conflict);
  });

  it('isClaimable and claim agree on every state and time', () => {
    const leases: WorkLease[] = KINDS.flatMap((kind) => [
      createdWork(kind),
      claimedWork(kind),
      startingWork(kind),
      activeWork(kind),
      stoppingWork(kind),
      stoppedWork(kind),
    ]);
    for (const lease of leases) {
      for (const seconds of [0, 4, 5, 30, 61, 62, 119, 120, 400]) {
        const claimable = isClaimable(lease, at(seconds));
        const claimed = (() => {
          try {
            claim(lease, at(seconds));
            return true;
          } catch {
            return false;
          }
        })();
        expect({ state: lease.state, seconds, claimed }).toEqual({
          state: lease.state,
          seconds,
          claimed: claimable,
        });
      }
    }
  });
});

describe('ack', () => {
  it('moves a claimed item from queued to starting with the starting lease', () => {
    const { next, alreadyAcked } = ack(claimedWork('session'), at(1));
    expect(alreadyAcked).toBe(false);
    expect(next).toMatchObject({
      state: 'starting',
      acknowledgedAt: at(1),
      ttlSeconds: STARTING_LEASE_SECONDS,
      leaseExpiresAt: at(1 + STARTING_LEASE_SECONDS),
    });
  });

  it('acks a stale tentative claim nobody reclaimed', () => {
    expect(ack(claimedWork('session'), at(30)).next.state).toBe('starting');
  });

  it('rejects Ack of an unclaimed item with 409', () => {
    expectError(() => ack(createdWork('session'), at(1)), ErrorCode.Conflict, /not been claimed/);
  });

  it.each([
    ['starting', () => startingWork('session')],
    ['active', () => activeWork('session')],
    ['stopping', () => stoppingWork('session')],
  ])('a repeated Ack of %s Work is idempotent and changes nothing', (_label, make) => {
    const lease = make();
    expect(ack(lease, at(4))).toEqual({ next: lease, alreadyAcked: true });
  });

  it('rejects Ack of stopped Work with 409', () => {
    expectError(() => ack(stoppedWork('session'), at(4)), ErrorCode.Conflict, /stopped/);
  });

  it('rejects Ack of an overdue healthcheck: it has timed out', () => {
    expectError(() => ack(claimedWork('healthcheck'), at(120)), ErrorCode.Conflict, /stopped/);
  });
});

describe('heartbeat', () => {
  it('the first heartbeat says NO_HEARTBEAT and makes starting Work active', () => {
    const { next, response } = heartbeat(
      startingWork('session'),
      { expectedLastHeartbeat: NO_HEARTBEAT, desiredTtlSeconds: 30 },
      at(2),
    );
    expect(next).toMatchObject({
      state: 'active',
      startedAt: at(2),
      latestHeartbeatAt: at(2),
      leaseExpiresAt: at(32),
      ttlSeconds: 30,
    });
    expect(response).toEqual({
      last_heartbeat: wire(2),
      lease_extended: true,
      state: 'active',
      ttl_seconds: 30,
    });
  });

  it('the TTL defaults to 60 seconds', () => {
    const { response } = heartbeat(startingWork('session'), { expectedLastHeartbeat: NO_HEARTBEAT }, at(2));
    expect(response.ttl_seconds).toBe(DEFAULT_TTL_SECONDS);
  });

  it('a later heartbeat echoing the previous last_heartbeat renews the lease from now', () => {
    const { next, response } = heartbeat(
      activeWork('session'),
      { expectedLastHeartbeat: wire(2), desiredTtlSeconds: 300 },
      at(40),
    );
    expect(next).toMatchObject({ state: 'active', startedAt: at(2), leaseExpiresAt: at(340) });
    expect(response).toEqual({
      last_heartbeat: wire(40),
      lease_extended: true,
      state: 'active',
      ttl_seconds: 300,
    });
  });

  it('a stale timestamp is 412 with the current lease state and no extension', () => {
    const lease = heartbeat(activeWork('session'), { expectedLastHeartbeat: wire(2) }, at(20)).next;
    const error = expectError(
      () => heartbeat(lease, { expectedLastHeartbeat: wire(2) }, at(30)),
      ErrorCode.PreconditionFailed,
    );
    expect(error.details).toEqual({
      current_state: { state: 'active', ttl_seconds: 60, last_heartbeat: wire(20), lease_extended: false },
    });
  });

  it.each([
    ['NO_HEARTBEAT on active Work', () => activeWork('session'), NO_HEARTBEAT],
    ['a timestamp on starting Work', () => startingWork('session'), wire(1)],
    ['the same instant without milliseconds', () => activeWork('session'), '2026-10-01T12:00:02Z'],
  ])('%s is 412: the echo must be exact', (_label, make, expected) => {
    expectError(
      () => heartbeat(make(), { expectedLastHeartbeat: expected }, at(5)),
      ErrorCode.PreconditionFailed,
    );
  });

  it.each([
    ['starting', () => startingWork('session'), NO_HEARTBEAT, 61],
    ['active', () => activeWork('session'), wire(2), 62],
  ])('an expired %s lease is 412, even with the right timestamp', (_label, make, expected, seconds) => {
    const error = expectError(
      () => heartbeat(make(), { expectedLastHeartbeat: expected }, at(seconds)),
      ErrorCode.PreconditionFailed,
      /expired/,
    );
    expect(error.details).toMatchObject({ current_state: { lease_extended: false } });
  });

  it.each([0, 301, 1.5, -5])('rejects desired_ttl_seconds %p with 400', (ttl) => {
    expectError(
      () =>
        heartbeat(
          startingWork('session'),
          { expectedLastHeartbeat: NO_HEARTBEAT, desiredTtlSeconds: ttl },
          at(2),
        ),
      ErrorCode.InvalidRequest,
      /1 through 300/,
    );
  });

  it.each([1, 300])('accepts desired_ttl_seconds %p', (ttl) => {
    const { response } = heartbeat(
      startingWork('session'),
      { expectedLastHeartbeat: NO_HEARTBEAT, desiredTtlSeconds: ttl },
      at(2),
    );
    expect(response.ttl_seconds).toBe(ttl);
  });

  it('while stopping, a heartbeat is answered but never extends the lease, so the worker cancels', () => {
    const lease = stoppingWork('session');
    const { next, response } = heartbeat(
      lease,
      { expectedLastHeartbeat: wire(2), desiredTtlSeconds: 300 },
      at(10),
    );
    expect(next).toBe(lease);
    expect(next.leaseExpiresAt).toEqual(at(62));
    expect(response).toEqual({
      last_heartbeat: wire(2),
      lease_extended: false,
      state: 'stopping',
      ttl_seconds: 60,
    });
  });

  it('a stopping token expires no later than its current TTL: the Work is then stopped (401)', () => {
    expectError(
      () => heartbeat(stoppingWork('session'), { expectedLastHeartbeat: wire(2) }, at(62)),
      ErrorCode.Authentication,
      /stopped/,
    );
  });

  it('a heartbeat before Ack is 401: the token is not usable yet', () => {
    expectError(
      () => heartbeat(claimedWork('session'), { expectedLastHeartbeat: NO_HEARTBEAT }, at(1)),
      ErrorCode.Authentication,
      /acknowledged/,
    );
  });

  it('a heartbeat on stopped Work is 401', () => {
    expectError(
      () => heartbeat(stoppedWork('session'), { expectedLastHeartbeat: wire(2) }, at(4)),
      ErrorCode.Authentication,
      /stopped/,
    );
  });

  it('a heartbeat at the healthcheck deadline is 401: the check has timed out', () => {
    const lease = heartbeat(
      activeWork('healthcheck'),
      { expectedLastHeartbeat: wire(2), desiredTtlSeconds: 300 },
      at(50),
    ).next;
    expectError(
      () => heartbeat(lease, { expectedLastHeartbeat: wire(50) }, at(120)),
      ErrorCode.Authentication,
      /stopped/,
    );
  });
});

describe('stop', () => {
  it.each([
    ['queued', () => createdWork('session')],
    ['claimed', () => claimedWork('session')],
    ['starting', () => startingWork('session')],
  ])('a graceful Stop of %s Work stops it at once', (_label, make) => {
    const { next, changed } = stop(make(), { force: false }, at(5));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stopRequestedAt: at(5), stoppedAt: at(5) });
  });

  it('a graceful Stop of active Work asks the worker to cancel: stopping, lease unchanged', () => {
    const { next, changed } = stop(activeWork('session'), { force: false }, at(5));
    expect(changed).toBe(true);
    expect(next).toMatchObject({
      state: 'stopping',
      stopRequestedAt: at(5),
      stoppedAt: null,
      leaseExpiresAt: at(62),
    });
  });

  it.each([
    ['queued', () => createdWork('session')],
    ['starting', () => startingWork('session')],
    ['active', () => activeWork('session')],
    ['stopping', () => stoppingWork('session')],
  ])('a forced Stop of %s Work records stopped immediately', (_label, make) => {
    const { next, changed } = stop(make(), { force: true }, at(5));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(5) });
    expect(next.stopRequestedAt).not.toBeNull();
  });

  it('a forced Stop of stopping Work keeps the original stop request time', () => {
    expect(stop(stoppingWork('session'), { force: true }, at(5)).next.stopRequestedAt).toEqual(at(3));
  });

  it('a graceful Stop of stopping Work changes nothing', () => {
    const lease = stoppingWork('session');
    expect(stop(lease, { force: false }, at(5))).toEqual({ next: lease, changed: false });
  });

  it.each([true, false])('Stop of stopped Work is an idempotent success (force: %p)', (force) => {
    const lease = stoppedWork('session');
    expect(stop(lease, { force }, at(5))).toEqual({ next: lease, changed: false });
  });

  it('Stop of a stopping item whose lease ran out reports the reconciled stop', () => {
    const { next, changed } = stop(stoppingWork('session'), { force: false }, at(70));
    expect(changed).toBe(true);
    expect(next).toMatchObject({ state: 'stopped', stoppedAt: at(62) });
  });
});

describe('fail', () => {
  it.each([
    ['starting', () => startingWork('session')],
    ['active', () => activeWork('session')],
    ['stopping', () => stoppingWork('session')],
  ])('Fail from a live %s lease stops the Work', (_label, make) => {
    expect(fail(make(), 'skill archive digest mismatch', at(5)).next).toMatchObject({
      state: 'stopped',
      stoppedAt: at(5),
    });
  });

  it('accepts a message of exactly 1024 characters and rejects 1025 with 400', () => {
    expect(fail(activeWork('session'), 'x'.repeat(FAIL_MESSAGE_MAX), at(5)).next.state).toBe('stopped');
    expectError(
      () => fail(activeWork('session'), 'x'.repeat(FAIL_MESSAGE_MAX + 1), at(5)),
      ErrorCode.InvalidRequest,
      /1024/,
    );
  });

  it('is only for Session Work: a healthcheck reports Result instead (400)', () => {
    expectError(
      () => fail(activeWork('healthcheck'), 'boom', at(5)),
      ErrorCode.InvalidRequest,
      /session Work/,
    );
  });

  it.each([
    ['before Ack', () => claimedWork('session'), 1, /acknowledged/],
    ['after the lease expired', () => activeWork('session'), 62, /expired/],
    ['after Stop', () => stoppedWork('session'), 4, /stopped/],
  ])('Fail %s is 401: the token is not valid', (_label, make, seconds, message) => {
    expectError(() => fail(make(), 'bad input', at(seconds)), ErrorCode.Authentication, message);
  });
});
