import { drainInBatches, PeriodicPass } from './periodic-pass';

describe('PeriodicPass', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs a pass every interval, never two at once, and reports a failed pass without stopping', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    let release!: () => void;
    const pass = new PeriodicPass({
      intervalMs: 1_000,
      pass: () => {
        calls++;
        if (calls === 2) return Promise.reject(new Error('store down'));
        if (calls === 3) return new Promise<number>((r) => (release = () => r(calls)));
        return Promise.resolve(calls);
      },
      onError: (e) => errors.push(e),
    });
    pass.start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('store down')]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(3);
    // The third pass is still running: ticks are skipped, runOnce joins it.
    await jest.advanceTimersByTimeAsync(5_000);
    expect(calls).toBe(3);
    const joined = pass.runOnce();
    release();
    await expect(joined).resolves.toBe(3);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(4);
    await pass.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(4);
  });

  it('stop waits for the pass in flight; an interval of 0 never runs on a timer', async () => {
    let done = false;
    let release!: () => void;
    const pass = new PeriodicPass({
      intervalMs: 0,
      pass: () => new Promise<void>((r) => (release = () => ((done = true), r()))),
      onError: () => undefined,
    });
    pass.start();
    await jest.advanceTimersByTimeAsync(60_000);
    const run = pass.runOnce();
    const stopped = pass.stop().then(() => done);
    release();
    await run;
    await expect(stopped).resolves.toBe(true);
  });

  it('drainInBatches steps until a batch comes back short, and totals the rows', async () => {
    jest.useRealTimers();
    const sizes = [3, 3, 1];
    expect(await drainInBatches(async (batch) => (expect(batch).toBe(3), sizes.shift()!), 3)).toBe(7);
    expect(sizes).toEqual([]);
  });
});
