import { Client } from 'pg';

export interface PgListenerOptions {
  /** PostgreSQL connection URL. */
  url: string | undefined;
  /** One channel, or several LISTENed on the same connection (their notices then arrive in commit order). */
  channel: string | readonly string[];
  applicationName: string;
  /** A NOTIFY on one of the channels with a non-empty payload. */
  onNotify(payload: string, channel: string): void;
  /** The connection was lost (it reconnects). A re-read now may fail, and misses what commits before LISTEN is back. */
  onLost(): void;
  /**
   * LISTEN works again after a loss. Every NOTIFY sent while it was down is gone, so subscribers must
   * re-read the table now: a re-read at the loss alone misses what committed between it and this.
   */
  onReconnected(): void;
}

/**
 * One dedicated LISTEN connection that reconnects with capped exponential backoff (100 ms to 5 s).
 * NOTIFY only ever means "look now": the table stays the truth, so a lost connection costs latency,
 * never correctness.
 */
export class PgListener {
  private client?: Client;
  private closing = false;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and LISTENs; rejects if the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const { url, applicationName } = this.options;
    const channels: readonly string[] =
      typeof this.options.channel === 'string' ? [this.options.channel] : this.options.channel;
    const client = new Client({ connectionString: url, application_name: applicationName });
    client.on('notification', (msg) => {
      if (channels.includes(msg.channel) && msg.payload) this.options.onNotify(msg.payload, msg.channel);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of channels) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      // A half-open attempt (connected, LISTEN refused) is closed, not left behind beside the retry.
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
  }

  private lost(failed: Client): void {
    if (this.closing || this.client !== failed) return;
    this.client = undefined;
    this.options.onLost();
    const retry = (delay: number) =>
      setTimeout(() => {
        if (this.closing) return;
        this.connect().then(
          () => this.options.onReconnected(),
          () => retry(Math.min(delay * 2, 5000)),
        );
      }, delay).unref();
    retry(100);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client?.end().catch(() => undefined);
  }
}
