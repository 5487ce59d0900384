import type { MangoClient } from '@mango/sdk';
import { resultText, RunnerEvent, SessionToolRunner, SessionToolRunnerOptions } from './session-tool-runner';
import { Tool, ToolError } from './tools/types';

describe('resultText', () => {
  it.each([
    ['', '(no output)'],
    ['plain', 'plain'],
    ['a\u0000b\u0000', 'a\ufffdb\ufffd'],
    ['héllo ✓', 'héllo ✓'],
  ])('%j → %j', (input, expected) => {
    expect(resultText(input)).toBe(expected);
  });
});

/**
 * One Session's event log in memory, behind the four client calls the runner makes (history, stream,
 * send, retrieve). A posted result is appended to the log, as the API does. Scheduling is decided by
 * events the test awaits, never by a clock.
 */
class InMemorySession {
  readonly log: RunnerEvent[] = [];
  readonly results: Array<Record<string, any>> = [];
  status = 'running';
  private listeners: Array<(e: RunnerEvent) => void> = [];
  private seq = 0;

  append(e: Omit<RunnerEvent, 'id'> & { id?: string }): RunnerEvent {
    const event = { id: e.id ?? `sevt_${++this.seq}`, ...e } as RunnerEvent;
    this.log.push(event);
    for (const l of this.listeners) l(event);
    return event;
  }

  call(id: string, thread?: string): RunnerEvent {
    return this.append({
      id,
      type: 'agent.tool_use',
      name: 'probe',
      input: { id },
      evaluated_permission: 'allow',
      ...(thread ? { session_thread_id: thread } : {}),
    });
  }

  client(): MangoClient {
    const list = (): AsyncIterable<RunnerEvent> => {
      const snapshot = [...this.log];
      return (async function* () {
        yield* snapshot;
      })();
    };
    const stream = (_id: string, o: { signal: AbortSignal }) => this.stream(o.signal);
    const send = (_id: string, body: { events: Array<Record<string, any>> }) => {
      const [result] = body.events;
      this.results.push(result!);
      this.append({ ...result!, type: result!.type as string });
      return Promise.resolve({ data: [] });
    };
    const retrieve = () => Promise.resolve({ status: this.status });
    return { sessions: { events: { list, stream, send }, retrieve } } as unknown as MangoClient;
  }

  /** The whole log from its start, then each new event (the runner skips what it already handled). */
  private async *stream(signal: AbortSignal): AsyncIterable<{ id: string; event: RunnerEvent }> {
    let wake: (() => void) | undefined;
    const listener = () => wake?.();
    this.listeners.push(listener);
    try {
      for (let at = 0; !signal.aborted;) {
        const next = this.log[at];
        if (next) {
          at++;
          yield { id: next.id, event: next };
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        wake = undefined;
      }
    } finally {
      this.listeners = this.listeners.filter((l) => l !== listener);
    }
  }
}

/** A tool whose calls block until the test releases them; it records which calls ran and how many at once. */
class GatedTool implements Tool {
  readonly name = 'probe';
  readonly started: string[] = [];
  running = 0;
  peak = 0;
  private gates = new Map<string, () => void>();
  private startWaiters: Array<{ n: number; resolve: () => void }> = [];

  async run(input: Record<string, unknown>, ctx: { signal: AbortSignal }): Promise<string> {
    const id = String(input.id);
    this.started.push(id);
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    for (const w of this.startWaiters.filter((w) => this.started.length >= w.n)) w.resolve();
    try {
      await new Promise<void>((resolve, reject) => {
        this.gates.set(id, resolve);
        ctx.signal.addEventListener('abort', () => reject(new ToolError('probe: cancelled')), { once: true });
      });
      return `ran ${id}`;
    } finally {
      this.running--;
    }
  }

  release(id: string): void {
    this.gates.get(id)?.();
  }

  /** Resolves once `n` calls have started. */
  untilStarted(n: number): Promise<void> {
    if (this.started.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.startWaiters.push({ n, resolve }));
  }
}

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('SessionToolRunner scheduling (the worker contract: docs/worker-contract.md)', () => {
  let session: InMemorySession;
  let tool: GatedTool;
  let stop: AbortController;

  function runner(o: Partial<SessionToolRunnerOptions> = {}) {
    const r = new SessionToolRunner({
      client: session.client(),
      sessionId: 'sesn_1',
      tools: [tool],
      signal: stop.signal,
      log: quietLog,
      maxIdleMs: 0,
      ...o,
    });
    return { r, done: r.run() };
  }

  /**
   * Resolves once the Session log holds a result for `id`. Polls on timer turns, not only on the immediate
   * queue: an answer that waits on a timer (toolTimeoutMs) may come after any number of immediates (a CI run
   * under load spent 1,000 of them before the 20 ms timeout fired). The bound (10 s) only stops a hang.
   */
  async function untilAnswered(id: string): Promise<void> {
    for (let i = 0; i < 10_000 && !session.results.some((r) => r.tool_use_id === id); i++)
      await new Promise((r) => setTimeout(r, 1));
    expect(session.results.map((r) => r.tool_use_id)).toContain(id);
  }

  beforeEach(() => {
    session = new InMemorySession();
    tool = new GatedTool();
    stop = new AbortController();
    session.append({ type: 'session.status_running' });
  });

  afterEach(() => stop.abort());

  it('by default (maxConcurrentCalls 1) calls of different Threads run one at a time, in arrival order', async () => {
    const { done } = runner();
    session.call('sevt_a', 'sthr_one');
    session.call('sevt_b', 'sthr_two');
    await tool.untilStarted(1);
    expect(tool.started).toEqual(['sevt_a']);
    tool.release('sevt_a');
    await tool.untilStarted(2);
    tool.release('sevt_b');
    await untilAnswered('sevt_b');
    expect(tool.peak).toBe(1);
    expect(session.results.map((r) => [r.tool_use_id, r.session_thread_id])).toEqual([
      ['sevt_a', 'sthr_one'],
      ['sevt_b', 'sthr_two'],
    ]);
    stop.abort();
    await done;
  });

  it('with maxConcurrentCalls 2, calls of different Threads run side by side; one Thread’s calls still run in order', async () => {
    const { done } = runner({ maxConcurrentCalls: 2 });
    session.call('sevt_a1', 'sthr_one');
    session.call('sevt_a2', 'sthr_one');
    session.call('sevt_b1', 'sthr_two');
    await tool.untilStarted(2);
    // a2 waits behind a1 (same Thread); b1 (another Thread) started beside a1.
    expect(tool.started).toEqual(['sevt_a1', 'sevt_b1']);
    expect(tool.running).toBe(2);
    tool.release('sevt_b1');
    await untilAnswered('sevt_b1');
    expect(tool.started).toEqual(['sevt_a1', 'sevt_b1']);
    tool.release('sevt_a1');
    await tool.untilStarted(3);
    expect(tool.started).toEqual(['sevt_a1', 'sevt_b1', 'sevt_a2']);
    tool.release('sevt_a2');
    await untilAnswered('sevt_a2');
    expect(tool.peak).toBe(2);
    stop.abort();
    await done;
  });

  it('runs only calls the Session is waiting on: a call an interrupt closed while it waited never runs', async () => {
    const { done } = runner();
    session.call('sevt_a');
    session.call('sevt_b');
    await tool.untilStarted(1);
    session.append({ type: 'user.interrupt' });
    // The running call is cancelled (nothing posted); the waiting one never starts.
    for (let i = 0; i < 10_000 && tool.running; i++) await new Promise((r) => setTimeout(r, 1));
    expect(tool.running).toBe(0);
    session.call('sevt_c');
    await tool.untilStarted(2);
    expect(tool.started).toEqual(['sevt_a', 'sevt_c']);
    tool.release('sevt_c');
    await untilAnswered('sevt_c');
    expect(session.results.map((r) => r.tool_use_id)).toEqual(['sevt_c']);
    stop.abort();
    await done;
  });

  it('a call that outlives toolTimeoutMs is answered as an error (the bound is a parameter; its default is pinned in worker-contract.spec)', async () => {
    const { done } = runner({ toolTimeoutMs: 20 });
    session.call('sevt_slow');
    await untilAnswered('sevt_slow');
    expect(session.results[0]).toMatchObject({
      tool_use_id: 'sevt_slow',
      is_error: true,
      content: [{ type: 'text', text: 'probe: cancelled' }],
    });
    stop.abort();
    await done;
  });

  it('calls onIdle each time the Session goes idle (Memory is uploaded then), never two at once with afterCall', async () => {
    const order: string[] = [];
    let idles = 0;
    const { done } = runner({
      onIdle: async () => {
        idles++;
        order.push('idle:start');
        await new Promise((r) => setImmediate(r));
        order.push('idle:end');
      },
      afterCall: async () => {
        order.push('after:start');
        await new Promise((r) => setImmediate(r));
        order.push('after:end');
      },
    });
    session.call('sevt_a');
    await tool.untilStarted(1);
    tool.release('sevt_a');
    await untilAnswered('sevt_a');
    session.append({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    for (let i = 0; i < 10_000 && !order.includes('idle:end'); i++)
      await new Promise((r) => setTimeout(r, 1));
    expect(idles).toBe(1);
    expect(order).toEqual(['after:start', 'after:end', 'idle:start', 'idle:end']);
    stop.abort();
    await done;
  });
});
