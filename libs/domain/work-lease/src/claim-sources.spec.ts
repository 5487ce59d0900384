import { STARTING_LEASE_SECONDS } from './work-lease.constants';
import { ackTransition, claimSources } from './work-lease.state';

describe('the sources of the one-statement claim and Ack (computed from the state machine)', () => {
  it('claims unclaimed and stale queued items, and lost starting/active leases; never stopping or stopped', () => {
    expect(claimSources()).toEqual({
      unclaimed: ['queued'],
      staleClaim: ['queued'],
      lostLease: ['starting', 'active'],
    });
  });

  it('Ack moves a claimed queued item to starting with the starting lease; every other state is a repeat or refused', () => {
    expect(ackTransition()).toEqual({
      from: ['queued'],
      to: 'starting',
      leaseSeconds: STARTING_LEASE_SECONDS,
    });
  });
});
