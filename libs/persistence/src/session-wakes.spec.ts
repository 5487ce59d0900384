import { SessionWakes, untilReady } from './session-wakes';

describe('SessionWakes', () => {
  it('wakes only the subscribers of that Session, until they unsubscribe', () => {
    const wakes = new SessionWakes();
    const seen: string[] = [];
    const offA = wakes.subscribe('a', () => seen.push('a1'));
    wakes.subscribe('a', () => seen.push('a2'));
    wakes.subscribe('b', () => seen.push('b'));
    wakes.wake('a');
    expect(seen).toEqual(['a1', 'a2']);
    offA();
    wakes.wake('a');
    wakes.wake('nobody');
    expect(seen).toEqual(['a1', 'a2', 'a2']);
    wakes.wakeAll();
    expect(seen).toEqual(['a1', 'a2', 'a2', 'a2', 'b']);
    expect(wakes.waiting).toBe(2);
  });

  it('forgets a Session once its last subscriber is gone', () => {
    const wakes = new SessionWakes();
    const off = [wakes.subscribe('a', () => undefined), wakes.subscribe('a', () => undefined)];
    off.forEach((f) => f());
    expect(wakes.waiting).toBe(0);
  });
});

describe('untilReady', () => {
  const HOUR = 3_600_000;

  it('is ready at once when the first look says so, and leaves no subscription behind', async () => {
    const wakes = new SessionWakes();
    await expect(
      untilReady(wakes, 's', async () => true, { timeoutMs: HOUR, recheckMs: HOUR }),
    ).resolves.toBe('ready');
    expect(wakes.waiting).toBe(0);
  });

  it("looks again at the Session's wake-up (not at another Session's) and is ready then", async () => {
    const wakes = new SessionWakes();
    let looks = 0;
    let ready = false;
    const waiting = untilReady(
      wakes,
      's',
      async () => {
        looks += 1;
        return ready;
      },
      { timeoutMs: HOUR, recheckMs: HOUR },
    );
    await new Promise((r) => setImmediate(r));
    expect(looks).toBe(1);
    wakes.wake('other');
    await new Promise((r) => setImmediate(r));
    expect(looks).toBe(1);
    ready = true;
    wakes.wake('s');
    await expect(waiting).resolves.toBe('ready');
    expect(looks).toBe(2);
    expect(wakes.waiting).toBe(0);
  });

  it('a wake-up that comes while a look is running is not lost: it looks once more', async () => {
    const wakes = new SessionWakes();
    let looks = 0;
    const waiting = untilReady(
      wakes,
      's',
      async () => {
        looks += 1;
        // The result commits (and its notice arrives) while the first look reads the log.
        if (looks === 1) wakes.wake('s');
        return looks === 2;
      },
      { timeoutMs: HOUR, recheckMs: HOUR },
    );
    await expect(waiting).resolves.toBe('ready');
    expect(looks).toBe(2);
  });

  it('without any wake-up it re-checks on its own (a lost notice) and ends at the window with one last look', async () => {
    jest.useFakeTimers();
    try {
      const wakes = new SessionWakes();
      let looks = 0;
      const waiting = untilReady(
        wakes,
        's',
        async () => {
          looks += 1;
          return false;
        },
        { timeoutMs: 1000, recheckMs: 300 },
      );
      // Looks at 0, 300, 600, 900 and at the window's end (1000).
      await jest.advanceTimersByTimeAsync(1000);
      await expect(waiting).resolves.toBe('timeout');
      expect(looks).toBe(5);
      expect(wakes.waiting).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('a safety re-check finds what a lost notice did not announce', async () => {
    jest.useFakeTimers();
    try {
      let looks = 0;
      const waiting = untilReady(new SessionWakes(), 's', async () => ++looks === 3, {
        timeoutMs: 10_000,
        recheckMs: 500,
      });
      await jest.advanceTimersByTimeAsync(1000);
      await expect(waiting).resolves.toBe('ready');
    } finally {
      jest.useRealTimers();
    }
  });

  it('an abort (the activity is cancelled) ends the wait at once, and one before it starts skips the look', async () => {
    const wakes = new SessionWakes();
    const controller = new AbortController();
    const waiting = untilReady(wakes, 's', async () => false, {
      timeoutMs: HOUR,
      recheckMs: HOUR,
      signal: controller.signal,
    });
    await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(waiting).resolves.toBe('aborted');
    expect(wakes.waiting).toBe(0);
    let looked = false;
    await expect(
      untilReady(wakes, 's', async () => (looked = true), {
        timeoutMs: HOUR,
        recheckMs: HOUR,
        signal: controller.signal,
      }),
    ).resolves.toBe('aborted');
    expect(looked).toBe(false);
  });

  describe('with a watch begun earlier (since)', () => {
    it('makes no first look when nothing woke the Session since the watch began, and looks at its wake-up', async () => {
      const wakes = new SessionWakes();
      const since = wakes.watch('s');
      wakes.wake('other');
      let looks = 0;
      const waiting = untilReady(wakes, 's', async () => ++looks > 0, {
        timeoutMs: HOUR,
        recheckMs: HOUR,
        since,
      });
      await new Promise((r) => setImmediate(r));
      expect(looks).toBe(0);
      // The watch is closed: only untilReady's own subscription is left.
      expect(wakes.waiting).toBe(1);
      wakes.wake('s');
      await expect(waiting).resolves.toBe('ready');
      expect(looks).toBe(1);
      expect(wakes.waiting).toBe(0);
    });

    it('looks at once when the Session was woken after the watch began (e.g. a result came during the step)', async () => {
      const wakes = new SessionWakes();
      const since = wakes.watch('s');
      wakes.wake('s');
      expect(since.woken).toBe(true);
      let looks = 0;
      await expect(
        untilReady(wakes, 's', async () => ++looks > 0, { timeoutMs: HOUR, recheckMs: HOUR, since }),
      ).resolves.toBe('ready');
      expect(looks).toBe(1);
      expect(wakes.waiting).toBe(0);
    });

    it('still looks at the recheck interval and at the end of the window (a lost notice)', async () => {
      // Jest's clock: on a loaded machine a real 10 ms timer can fire after the 30 ms window has ended.
      jest.useFakeTimers();
      try {
        const wakes = new SessionWakes();
        const start = Date.now();
        const looks: number[] = [];
        const waiting = untilReady(wakes, 's', async () => (looks.push(Date.now() - start), false), {
          timeoutMs: 30,
          recheckMs: 10,
          since: wakes.watch('s'),
        });
        await jest.advanceTimersByTimeAsync(30);
        await expect(waiting).resolves.toBe('timeout');
        expect(looks).toEqual([10, 20, 30]);
        expect(wakes.waiting).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });
  });
});
