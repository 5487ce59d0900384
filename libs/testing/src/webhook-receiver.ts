import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body, when at least one of the receiver's secrets verified it (`standardwebhooks`). */
  event: { type: string; id: string; created_at: string; data: Record<string, unknown> } | null;
  /** Which of the receiver's secrets verified it. */
  verifiedWith: string[];
  receivedAt: number;
  /** The status the receiver answered. */
  answered: number;
}

/**
 * A Standard Webhooks receiver in the test process (127.0.0.1): verifies every delivery with the
 * maintained `standardwebhooks` library against the secrets it holds, and answers with scripted statuses
 * (per path, first-in first-out; 200 when the script is empty).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly secrets: string[] = [];
  private readonly scripts = new Map<string, number[]>();
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        const headers = req.headers;
        const verifiedWith = this.secrets.filter((s) => {
          try {
            new Webhook(s).verify(body, {
              'webhook-id': String(headers['webhook-id']),
              'webhook-timestamp': String(headers['webhook-timestamp']),
              'webhook-signature': String(headers['webhook-signature']),
            });
            return true;
          } catch {
            return false;
          }
        });
        const status = this.scripts.get(path)?.shift() ?? 200;
        this.received.push({
          path,
          headers,
          body,
          event: verifiedWith.length ? JSON.parse(body) : null,
          verifiedWith,
          receivedAt: Date.now(),
          answered: status,
        });
        res.writeHead(status, status >= 300 && status < 400 ? { location: `${this.url}/redirected` } : {});
        res.end(status < 300 ? 'ok' : 'no');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  trust(secret: string): void {
    this.secrets.push(secret);
  }

  forget(secret: string): void {
    const i = this.secrets.indexOf(secret);
    if (i >= 0) this.secrets.splice(i, 1);
  }

  /** The next answers for `path` (then 200). */
  answer(path: string, ...statuses: number[]): void {
    this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...statuses]);
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `predicate` holds over what `path` received (fails after `timeoutMs`). */
  async waitFor(
    path: string,
    predicate: (got: ReceivedWebhook[]) => boolean,
    timeoutMs = 60_000,
  ): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = this.at(path);
      if (predicate(got)) return got;
      if (Date.now() > deadline)
        throw new Error(
          `webhook receiver ${path}: condition not met; got ${JSON.stringify(got.map((g) => g.event?.data ?? g.body))}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
