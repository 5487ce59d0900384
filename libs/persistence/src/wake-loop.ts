import { PgListener } from './pg-listener';

export interface WakeLoopOptions {
  url: string;
  /** The NOTIFY channel that says "look now". */
  channel: string;
  applicationName: string;
  /** The safety-net sweep: a pass at least this often, whatever NOTIFY said. */
  sweepMs: number;
  /** One pass over the pending rows; a failed pass is retried on the next wake-up. */
  pass: () => Promise<void>;
  onPassError: (err: unknown) => void;
  /** Called once when a pass succeeds after one or more failed passes (the dependency is back). */
  onRecovered?: () => void;
  /** Called when the LISTEN connection was lost (it reconnects; the sweep keeps passing). */
  onLost?: () => void;
  /** Called when the LISTEN connection works again after a loss. */
  onReconnected?: () => void;
  /** Each notice's payload, before the pass it wakes (e.g. in-process wake-ups by Session, ADR 0019). */
  onNotice?: (payload: string) => void;
}

/**
 * The loop every outbox relay runs: woken by NOTIFY (a reconnecting LISTEN), with a slow sweep as the
 * safety net, and single-flight — a wake-up during a pass runs exactly one more pass after it.
 */
export class WakeLoop {
  private listener?: PgListener;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private failing = false;

  constructor(private readonly o: WakeLoopOptions) {}

  async start(): Promise<void> {
    this.listener = new PgListener({
      url: this.o.url,
      channel: this.o.channel,
      applicationName: this.o.applicationName,
      onNotify: (payload) => {
        this.o.onNotice?.(payload);
        this.kick();
      },
      onLost: () => {
        this.o.onLost?.();
        this.kick();
      },
      onReconnected: () => {
        this.o.onReconnected?.();
        this.kick();
      },
    });
    await this.listener.start();
    this.timer = setInterval(() => this.kick(), this.o.sweepMs);
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.o
      .pass()
      .then(
        () => {
          if (this.failing) this.o.onRecovered?.();
          this.failing = false;
        },
        (err: unknown) => {
          this.failing = true;
          this.o.onPassError(err);
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Stops waking, waits for the pass in flight, closes the listener. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.listener?.close();
  }
}
