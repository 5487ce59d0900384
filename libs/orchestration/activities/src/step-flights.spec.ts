import { CancelledFailure } from '@temporalio/activity';
import { claiming, StepFlights, untilLanded } from './step-flights';

describe('StepFlights: one model request per step in a process', () => {
  it('a second claim of a step in flight gets that flight, and lands when it is released', async () => {
    const flights = new StepFlights();
    const first = flights.claim('sesn_1/turn:1:step:1');
    expect('release' in first).toBe(true);
    const second = flights.claim('sesn_1/turn:1:step:1');
    expect('busy' in second).toBe(true);
    // Another step, or the same key of another Session, is not held up.
    expect('release' in flights.claim('sesn_1/turn:1:step:2')).toBe(true);
    expect('release' in flights.claim('sesn_2/turn:1:step:1')).toBe(true);
    let landed = false;
    const waiting = (second as { busy: Promise<void> }).busy.then(() => (landed = true));
    await new Promise((r) => setImmediate(r));
    expect(landed).toBe(false);
    (first as { release: () => void }).release();
    await waiting;
    expect(landed).toBe(true);
    // Released: the step may be claimed again.
    expect('release' in flights.claim('sesn_1/turn:1:step:1')).toBe(true);
  });

  it('releasing twice is harmless, and an old release does not end a newer claim', () => {
    const flights = new StepFlights();
    const first = flights.claim('k') as { release: () => void };
    first.release();
    const second = flights.claim('k') as { release: () => void };
    first.release();
    expect('busy' in flights.claim('k')).toBe(true);
    second.release();
    second.release();
    expect(flights.size).toBe(0);
  });

  it('claiming releases every claim left when the transaction fails, and none when it commits', async () => {
    const flights = new StepFlights();
    await expect(
      claiming(async (claims) => {
        const c = flights.claim('k') as { release: () => void };
        claims.push(c.release);
        throw new Error('commit failed');
      }),
    ).rejects.toThrow('commit failed');
    expect(flights.size).toBe(0);
    await claiming(async (claims) => {
      claims.push((flights.claim('k') as { release: () => void }).release);
    });
    expect(flights.size).toBe(1);
  });

  it('a waiting attempt stops at its cancellation, before or during the wait', async () => {
    const never = new Promise<void>(() => undefined);
    const before = new AbortController();
    before.abort();
    await expect(untilLanded(never, before.signal)).rejects.toBeInstanceOf(CancelledFailure);
    const during = new AbortController();
    const waiting = untilLanded(never, during.signal);
    during.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledFailure);
    // A flight that lands ends the wait.
    await expect(untilLanded(Promise.resolve(), new AbortController().signal)).resolves.toBeUndefined();
  });
});
