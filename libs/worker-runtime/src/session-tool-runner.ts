import { asOwnType, callsClosedBy } from '@mango/domain-sessions';
import { isRetryableStatus, MangoClient, MangoError, RequestAbortedError } from '@mango/sdk';
import { backoffMs, sleep } from './backoff';
import type { ItemLog } from './item-options';
import { Tool, ToolError, ToolUse } from './tools/types';
import { TOOL_REPORT_MSG, ToolOutcome, ToolReport } from './tool-report';
import { ACTIVATION_BUSY_MSG, ACTIVATION_IDLE_MSG } from './idle-activations';

import { DEFAULT_MAX_CONCURRENT_CALLS, TOOL_TIMEOUT_MS } from './worker-contract';
export const DEFAULT_MAX_IDLE_MS = 60_000;
/** How often an idle runner repeats its idle line (idle-activations.ts): what an adopting supervisor waits at most. */
export const IDLE_REPORT_EVERY_MS = 20_000;
const STREAM_BACKOFF = { baseMs: 500, maxMs: 10_000 };
const SEND_BACKOFF = { baseMs: 1000, maxMs: 30_000 };
/** Teardown waits at most this long for the call in flight. */
const DRAIN_TIMEOUT_MS = 30_000;

/** A Session event as the API renders it (only the fields the runner reads). */
export interface RunnerEvent {
  id: string;
  type: string;
  [field: string]: any;
}

export type RunnerStop = 'idle' | 'terminated' | 'deleted' | 'cancelled' | 'refused' | 'drained';

export interface SessionToolRunnerOptions {
  /** Bound to the Work token. */
  client: MangoClient;
  sessionId: string;
  tools: Tool[];
  /**
   * Operator custom tools (docs/operator-guide.md "Operator custom tools"): `agent.custom_tool_use` calls
   * with one of these names are run here and answered with `user.custom_tool_result`; any other custom
   * call is left to the application.
   */
  customTools?: Tool[];
  /** Aborted on lease loss, Stop or shutdown: the runner cancels the running tool and posts nothing more. */
  signal: AbortSignal;
  log: ItemLog;
  /** Graceful shutdown: finish (and post) the call in flight, then stop; the lease stays renewable. */
  drain?: AbortSignal;
  /** Stop this long after the Session went idle (not `requires_action`) with nothing new. */
  maxIdleMs?: number;
  /**
   * While idle, the `session activation idle` line is repeated this often (default 20 s), so a supervisor
   * that adopted this container after a restart (it reads the output from then on) learns it too.
   */
  idleReportEveryMs?: number;
  /** The bound of one tool call (default: the contract's 325 s). */
  toolTimeoutMs?: number;
  /**
   * How many calls may run at once (default 1, as upstream's `maxConcurrentCalls`): only calls of
   * different Threads run side by side; one Thread's calls run one at a time, in order.
   */
  maxConcurrentCalls?: number;
  /** Called each time the Session goes idle (`session.status_idle` on the stream): Memory is uploaded then. */
  onIdle?: () => Promise<void>;
  /** How long a result may be retried (the lease TTL). */
  sendWindowMs?: () => number;
  /** Called after each dispatched call (e.g. Memory sync). */
  afterCall?: () => Promise<void>;
}

/**
 * Serves one Session's sandbox tool calls (wire contract §4.5, docs/worker-contract.md): reconciles the
 * history, follows the event stream (resuming with Last-Event-ID), honours `evaluated_permission` — `ask`
 * waits for a persisted allow, `deny` never runs — runs only calls the Session is still waiting on (not
 * answered, not closed by an interrupt or a finished turn), at most `maxConcurrentCalls` at once (default
 * 1; only calls of different Threads side by side), each bounded by `toolTimeoutMs` (325 s), calls
 * `onIdle` when the Session goes idle, and posts `user.tool_result` with
 * bounded retries (an identical retry returns the stored event). Tools receive the original event so
 * side effects can be idempotent. Results copy the call's `session_thread_id` when it has one (threads
 * are routed by the server). Operator custom tools (`customTools`) answer `agent.custom_tool_use` calls of
 * their names with `user.custom_tool_result`; other custom calls stay with the application. Ends on idle, termination, deletion, refusal of the token, or `signal`.
 */
export class SessionToolRunner {
  /** Every event already applied (the stream may replay what the history listing applied). */
  private readonly handled = new Set<string>();
  private readonly seen = new Set<string>();
  private readonly answered = new Set<string>();
  /** Calls a `user.interrupt` or a finished turn closed: never run, nothing posted. */
  private readonly closed = new Set<string>();
  /** Seen calls neither answered nor closed, with their Thread (null: the primary): what the next interrupt or finished turn of that Thread closes. */
  private readonly open = new Map<string, string | null>();
  private readonly verdicts = new Map<string, string>();
  private readonly held = new Map<string, RunnerEvent>();
  private readonly deadThreads = new Set<string>();
  private idleTimer?: NodeJS.Timeout;
  private stopReason?: RunnerStop;
  private connection?: AbortController;
  /**
   * Calls wait here in arrival order while the stream keeps being read (interrupts cancel them); `pump`
   * starts them, at most `maxConcurrentCalls` at once and one per Thread.
   */
  private readonly waiting: Array<{ tool: Tool; e: RunnerEvent }> = [];
  /** The Threads (key: the Thread id, '' for the primary) with a call running. */
  private readonly busyThreads = new Set<string>();
  private running = 0;
  /** Calls enqueued and not yet finished (waiting or running). */
  private pending = 0;
  private readonly settledWaiters: Array<() => void> = [];
  /** `afterCall` and `onIdle` hooks run one at a time (Memory passes must not overlap). */
  private hooks: Promise<void> = Promise.resolve();
  /** The last event that set the idle countdown: re-applied once the calls in flight are done. */
  private lastClock?: RunnerEvent;
  private readonly inflight = new Map<string, AbortController>();
  private draining = false;
  /** Whether this runner last told the supervisor it is waiting out its idle time (idle-activations.ts). */
  private idleReported = false;
  private idleRepeat?: NodeJS.Timeout;
  /** Tool call ids whose result this runner posted (for tests and logs). */
  readonly posted: string[] = [];

  constructor(private readonly o: SessionToolRunnerOptions) {}

  async run(): Promise<RunnerStop> {
    const onAbort = () => this.stop('cancelled');
    this.o.signal.addEventListener('abort', onAbort, { once: true });
    const onDrain = () => {
      this.draining = true;
      if (this.pending === 0) this.stop('drained');
    };
    if (this.o.drain?.aborted) onDrain();
    this.o.drain?.addEventListener('abort', onDrain, { once: true });
    let lastEventId: string | undefined;
    try {
      for (let attempt = 0; !this.stopReason;) {
        this.connection = new AbortController();
        try {
          await this.reconcile();
          if (this.stopReason) break;
          const stream = this.o.client.sessions.events.stream(
            this.o.sessionId,
            { lastEventId, signal: this.connection.signal },
            { maxRetries: 0, timeoutMs: 60_000 },
          );
          for await (const { id, event } of stream) {
            attempt = 0;
            if (id) lastEventId = id;
            this.handle(event as unknown as RunnerEvent);
            if (this.stopReason) break;
          }
        } catch (err) {
          if (this.stopReason || err instanceof RequestAbortedError) break;
          if (isRefusal(err)) {
            this.o.log.warn({ err: String(err) }, 'the Work token was refused: the lease is gone');
            this.stop('refused');
            break;
          }
          this.o.log.warn({ err: String(err), attempt }, 'event stream interrupted; reconnecting');
          await sleep(backoffMs(attempt++, STREAM_BACKOFF), this.o.signal);
        }
      }
      // Teardown: a call the Session ended is cancelled; a drained one finishes and posts (bounded).
      if (this.stopReason !== 'drained') for (const ctrl of this.inflight.values()) ctrl.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.settled(), new Promise((r) => (timer = setTimeout(r, DRAIN_TIMEOUT_MS)))]);
      clearTimeout(timer);
    } finally {
      this.o.signal.removeEventListener('abort', onAbort);
      this.o.drain?.removeEventListener('abort', onDrain);
      clearTimeout(this.idleTimer);
      clearInterval(this.idleRepeat);
    }
    return this.stopReason ?? 'cancelled';
  }

  private stop(reason: RunnerStop): void {
    this.stopReason ??= reason;
    clearInterval(this.idleRepeat);
    this.connection?.abort();
  }

  /**
   * Lists the whole history: answered calls, verdicts, dead threads and calls an interrupt or a finished
   * turn closed; then routes the calls still open, in history order.
   */
  private async reconcile(): Promise<void> {
    const history: RunnerEvent[] = [];
    for await (const e of this.o.client.sessions.events.list(
      this.o.sessionId,
      { limit: 1000 },
      { signal: this.connection!.signal, maxRetries: 2 },
    ))
      history.push(e as unknown as RunnerEvent);
    const open = new Map<string, string | null>();
    for (const e of history) {
      this.handled.add(e.id);
      if (isCall(e)) open.set(e.id, threadOf(e));
      else if (e.type === 'user.tool_result' || e.type === 'user.custom_tool_result') {
        this.answered.add(answeredId(e));
        open.delete(answeredId(e));
      } else if (e.type === 'user.tool_confirmation') this.verdicts.set(e.tool_use_id, e.result);
      else if (e.type === 'session.thread_status_terminated' && e.session_thread_id)
        this.deadThreads.add(e.session_thread_id);
      for (const id of closedBy(e, open)) {
        this.close(id);
        open.delete(id);
      }
    }
    for (const e of history) {
      if (this.stopReason) return;
      if (isCall(e)) this.see(e);
      else if (e.type === 'session.status_terminated') this.stop('terminated');
    }
    const last = history.filter((e) => !NEUTRAL.has(e.type)).at(-1);
    if (last) this.clock(last);
  }

  private handle(e: RunnerEvent): void {
    if (e.id) {
      if (this.handled.has(e.id)) return;
      this.handled.add(e.id);
    }
    switch (e.type) {
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        this.see(e);
        break;
      case 'user.tool_confirmation': {
        this.verdicts.set(e.tool_use_id, e.result);
        const held = this.held.get(e.tool_use_id);
        if (held) {
          this.held.delete(e.tool_use_id);
          if (e.result === 'allow') this.enqueue(held);
        }
        break;
      }
      case 'user.tool_result':
      case 'user.custom_tool_result':
        this.answered.add(answeredId(e));
        this.open.delete(answeredId(e));
        this.held.delete(answeredId(e));
        break;
      case 'session.thread_status_terminated':
        if (e.session_thread_id) {
          this.deadThreads.add(e.session_thread_id);
          for (const [id, call] of this.held)
            if (call.session_thread_id === e.session_thread_id) this.held.delete(id);
        }
        break;
      case 'session.status_terminated':
        return this.stop('terminated');
      case 'session.deleted':
        return this.stop('deleted');
      case 'session.status_idle':
        if (this.o.onIdle) void this.hook(this.o.onIdle);
        break;
    }
    for (const id of closedBy(e, this.open)) this.close(id);
    if (!NEUTRAL.has(e.type)) this.clock(e);
  }

  /** A call the server closed (interrupt, finished turn): drop it, and cancel it if it is running. */
  private close(id: string): void {
    this.closed.add(id);
    this.open.delete(id);
    this.held.delete(id);
    this.inflight.get(id)?.abort();
  }

  private see(e: RunnerEvent): void {
    if (this.seen.has(e.id) || this.answered.has(e.id) || this.closed.has(e.id)) return;
    this.seen.add(e.id);
    this.open.set(e.id, threadOf(e));
    this.route(e);
  }

  /** The idle countdown: armed by an idle (the primary's or a Thread's) that is not `requires_action`, disarmed by anything else. */
  private clock(e: RunnerEvent): void {
    this.lastClock = e;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const maxIdle = this.o.maxIdleMs ?? DEFAULT_MAX_IDLE_MS;
    // A Thread's idle as well as the primary's (whichever Thread finishes last ends the Session's work);
    // confirmIdle then checks the Session's own status, the aggregate of its Threads.
    if (
      maxIdle <= 0 ||
      asOwnType(e.type) !== 'session.status_idle' ||
      e.stop_reason?.type === 'requires_action' ||
      this.held.size ||
      this.pending
    )
      return this.reportIdle(false);
    this.idleTimer = setTimeout(() => void this.confirmIdle(e, maxIdle), maxIdle);
    this.reportIdle(true);
  }

  /**
   * One output line per change of whether this activation is waiting out its idle time: the supervisor
   * may ask an idle one to end early (drain) when Work waits for its slot (idle-activations.ts).
   */
  private reportIdle(idle: boolean): void {
    if (idle === this.idleReported) return;
    this.idleReported = idle;
    const line = () =>
      this.o.log.info({ session_id: this.o.sessionId }, idle ? ACTIVATION_IDLE_MSG : ACTIVATION_BUSY_MSG);
    line();
    clearInterval(this.idleRepeat);
    this.idleRepeat = idle ? setInterval(line, this.o.idleReportEveryMs ?? IDLE_REPORT_EVERY_MS) : undefined;
    this.idleRepeat?.unref();
  }

  /**
   * Ends the activation only if the Session is still idle: input that arrived meanwhile was coalesced into
   * this Work, so the runner keeps serving it. (A small window before the final Stop remains; see the
   * server's coalescing.)
   */
  private async confirmIdle(e: RunnerEvent, maxIdle: number): Promise<void> {
    try {
      const session = await this.o.client.sessions.retrieve(this.o.sessionId, {
        signal: this.o.signal,
        maxRetries: 1,
      });
      if (session.status === 'idle' && !this.pending) return this.stop('idle');
      this.reportIdle(false); // input arrived meanwhile: its events disarm or re-arm the countdown
    } catch {
      if (this.o.signal.aborted) return;
      this.idleTimer = setTimeout(() => void this.confirmIdle(e, maxIdle), maxIdle);
    }
  }

  private route(e: RunnerEvent): void {
    if (e.session_thread_id && this.deadThreads.has(e.session_thread_id)) return;
    // Custom tools have no permission policy: one this worker serves runs at once.
    if (e.type === 'agent.custom_tool_use') return this.enqueue(e);
    const verdict = this.verdicts.get(e.id);
    if (e.evaluated_permission === 'deny') return;
    if (verdict !== undefined) {
      if (verdict === 'allow') this.enqueue(e);
      return;
    }
    if (
      e.evaluated_permission === undefined ||
      e.evaluated_permission === null ||
      e.evaluated_permission === 'allow'
    )
      return this.enqueue(e);
    this.held.set(e.id, e); // ask (or anything unknown): fail closed until a persisted allow
  }

  private enqueue(e: RunnerEvent): void {
    const tools = e.type === 'agent.custom_tool_use' ? (this.o.customTools ?? []) : this.o.tools;
    const tool = tools.find((t) => t.name === e.name);
    if (!tool) return; // another client owns it (e.g. the application's custom tool): leave it pending
    this.pending++;
    this.reportIdle(false);
    this.waiting.push({ tool, e });
    this.pump();
  }

  /** Starts waiting calls in arrival order while slots are free, skipping Threads that have one running. */
  private pump(): void {
    const limit = Math.max(1, this.o.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS);
    for (let i = 0; i < this.waiting.length && this.running < limit;) {
      const { tool, e } = this.waiting[i]!;
      const thread = threadOf(e) ?? '';
      if (this.busyThreads.has(thread)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.running++;
      this.busyThreads.add(thread);
      void this.execute(tool, e)
        .catch((err) => this.o.log.error({ tool_use_id: e.id, err: String(err) }, 'tool dispatch failed'))
        .finally(() => {
          this.running--;
          this.busyThreads.delete(thread);
          this.pending--;
          if (this.pending === 0) for (const resolve of this.settledWaiters.splice(0)) resolve();
          if (this.draining && this.pending === 0) this.stop('drained');
          // An idle that arrived while this call was still finishing (e.g. killed by an interrupt) starts
          // its countdown now; otherwise the activation would wait for the next event to end.
          else if (this.pending === 0 && !this.idleTimer && this.lastClock) this.clock(this.lastClock);
          this.pump();
        });
    }
  }

  /** Resolves once no call is waiting or running. */
  private settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /** Runs `fn` after the hooks before it (never two at once); a failure is logged. */
  private hook(fn: () => Promise<void>): Promise<void> {
    this.hooks = this.hooks
      .then(fn)
      .catch((err: unknown) => this.o.log.warn({ err: String(err) }, 'runner hook failed'));
    return this.hooks;
  }

  private async execute(tool: Tool, e: RunnerEvent): Promise<void> {
    if (this.stopReason || this.draining || this.closed.has(e.id) || this.answered.has(e.id)) return;
    const ctrl = new AbortController();
    this.inflight.set(e.id, ctrl);
    const use: ToolUse = { id: e.id, name: e.name, input: e.input, session_thread_id: e.session_thread_id };
    const signal = AbortSignal.any([
      this.o.signal,
      ctrl.signal,
      AbortSignal.timeout(this.o.toolTimeoutMs ?? TOOL_TIMEOUT_MS),
    ]);
    let text: string;
    let isError = false;
    const startedAt = Date.now();
    const t0 = performance.now();
    try {
      const input = e.input && typeof e.input === 'object' && !Array.isArray(e.input) ? e.input : {};
      text = await tool.run(input as Record<string, unknown>, { signal, toolUse: use });
    } catch (err) {
      isError = true;
      text = err instanceof ToolError ? err.message : `Error: ${(err as Error)?.message ?? String(err)}`;
    } finally {
      this.inflight.delete(e.id);
    }
    // The execution report the supervisor turns into a span and a metric (tool-report.ts; no content).
    // An interrupt, a closed call or a cancelled activation cuts the tool short: its result is not posted.
    const outcome: ToolOutcome =
      ctrl.signal.aborted || this.closed.has(e.id) || this.o.signal.aborted
        ? 'interrupted'
        : isError
          ? 'error'
          : 'ok';
    const report: ToolReport = {
      tool: e.name,
      tool_use_id: e.id,
      tool_kind: e.type === 'agent.custom_tool_use' ? 'custom' : 'sandbox',
      outcome,
      started_at: startedAt,
      duration_ms: Math.round((performance.now() - t0) * 1000) / 1000,
    };
    this.o.log.info({ ...report, is_error: isError }, TOOL_REPORT_MSG);
    if (this.o.signal.aborted || this.stopReason === 'refused') {
      this.o.log.warn({ tool_use_id: e.id }, 'cancelled or lease lost: the result is not posted');
      return;
    }
    if (ctrl.signal.aborted || this.closed.has(e.id)) {
      this.o.log.info(
        { tool_use_id: e.id },
        'the call was closed (interrupt or end of the Session): not posted',
      );
      return;
    }
    const content = [{ type: 'text', text: resultText(text) }];
    await this.send(
      e.type === 'agent.custom_tool_use'
        ? { type: 'user.custom_tool_result', custom_tool_use_id: e.id, is_error: isError, content }
        : {
            type: 'user.tool_result',
            tool_use_id: e.id,
            is_error: isError,
            content,
            ...(e.session_thread_id ? { session_thread_id: e.session_thread_id } : {}),
          },
    );
    if (this.o.afterCall) await this.hook(this.o.afterCall);
  }

  /** Posts one result; retries transient failures until the lease window is spent. */
  private async send(result: Record<string, unknown>): Promise<void> {
    const id = (result.tool_use_id ?? result.custom_tool_use_id) as string;
    const deadline = Date.now() + (this.o.sendWindowMs?.() ?? 60_000);
    for (let n = 0; ; n++) {
      if (this.o.signal.aborted) return;
      try {
        await this.o.client.sessions.events.send(this.o.sessionId, { events: [result] } as never, {
          maxRetries: 0,
          signal: this.o.signal,
        });
        this.answered.add(id);
        this.open.delete(id);
        this.posted.push(id);
        return;
      } catch (err) {
        if (this.o.signal.aborted) return;
        const status = (err as MangoError).status;
        if (isFatal(status) || Date.now() >= deadline) {
          this.o.log.error({ tool_use_id: id, status, err: String(err) }, 'tool result not accepted');
          if (status === 401) this.stop('refused');
          return;
        }
        await sleep(Math.min(backoffMs(n, SEND_BACKOFF), Math.max(0, deadline - Date.now())), this.o.signal);
      }
    }
  }
}

/** The Thread a wire event belongs to (null: the primary). */
function threadOf(e: RunnerEvent): string | null {
  return (e.session_thread_id as string | undefined) ?? null;
}

/**
 * The open calls a wire event closes, by the server's rule (`callsClosedBy` in domain-sessions; a wire
 * event's fields are its body): a Session-wide interrupt closes all, a Thread's finished turn its own.
 */
function closedBy(e: RunnerEvent, open: ReadonlyMap<string, string | null>): string[] {
  const closes = callsClosedBy({ type: e.type, sessionThreadId: threadOf(e), body: e });
  if (!closes) return [];
  return [...open].filter(([, t]) => 'every' in closes || t === closes.threadId).map(([id]) => id);
}

/**
 * The text a result carries: NUL characters (binary output; PostgreSQL text cannot hold them) become
 * U+FFFD, and an empty result says so.
 */
export function resultText(text: string): string {
  const clean = text.replaceAll(String.fromCharCode(0), '\ufffd');
  return clean || '(no output)';
}

/** A call this runner may serve: a sandbox tool call, or a custom tool call (served if its name is registered). */
function isCall(e: RunnerEvent): boolean {
  return e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use';
}

/** The call a result answers. */
function answeredId(e: RunnerEvent): string {
  return (e.type === 'user.custom_tool_result' ? e.custom_tool_use_id : e.tool_use_id) as string;
}

/** Events that neither arm nor disarm the idle countdown. */
const NEUTRAL = new Set(['user.tool_confirmation', 'session.thread_status_terminated']);

/** A 4xx the request will not outlive (408 and 429 are worth retrying: the SDK's `isRetryableStatus`). */
function isFatal(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && !isRetryableStatus(status);
}

function isRefusal(err: unknown): boolean {
  const status = (err as MangoError)?.status;
  return isFatal(status);
}
