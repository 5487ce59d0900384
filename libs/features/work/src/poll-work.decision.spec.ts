import { nextPollStep, reclaimKindOf } from './poll-work.decision';

describe('Poll loop decisions', () => {
  it.each([
    // claimed, remainingMs, blocking, nextWakeMs → step
    [true, 5_000, true, undefined, { kind: 'return_work' }],
    [true, 0, false, undefined, { kind: 'return_work' }],
    [false, 0, true, undefined, { kind: 'return_empty' }],
    [false, -3, true, 10, { kind: 'return_empty' }],
    [false, 5_000, false, undefined, { kind: 'return_empty' }],
    [false, 5_000, true, undefined, { kind: 'wait', ms: 5_000 }],
    [false, 5_000, true, 20, { kind: 'wait', ms: 20 }],
    [false, 5_000, true, 60_000, { kind: 'wait', ms: 5_000 }],
    [false, 1, true, 0, { kind: 'wait', ms: 0 }],
  ])(
    'claimed=%s remaining=%s blocking=%s nextWake=%s → %o',
    (claimed, remainingMs, blocking, nextWakeMs, step) => {
      expect(nextPollStep({ claimed, nextWakeMs }, remainingMs, blocking)).toEqual(step);
    },
  );

  it.each([
    ['queued', null, 'none'],
    ['queued', new Date(0), 'tentative'],
    ['starting', new Date(0), 'lease_expired'],
    ['active', new Date(0), 'lease_expired'],
  ] as const)('a claim of a %s item (claimedAt %s) is reclaim=%s', (state, claimedAt, kind) => {
    expect(reclaimKindOf({ state, claimedAt })).toBe(kind);
  });
});
