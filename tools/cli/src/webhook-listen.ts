import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export interface ListenOptions {
  host: string;
  port: number;
  /** Signing secrets (`whsec_…`); a delivery is accepted when one verifies it (rotation overlap). */
  secrets: string[];
  /** One line per verified delivery (`<type>\t<id>\t<webhook-id>`, or the event as JSON). */
  onDelivery: (line: string) => void;
  onRejected: (line: string) => void;
  json?: boolean;
  /** Stop after this many verified deliveries (for scripts). */
  count?: number;
}

const MAX_BODY = 1 << 20;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error('body over 1 MiB'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * `mango webhook listen`: a local receiver that verifies every delivery with the maintained
 * `standardwebhooks` library (signature over `webhook-id.webhook-timestamp.body`, 5-minute timestamp
 * tolerance) and answers 204, or 400 with the reason (so Mango retries and the delivery log shows why).
 * Resolves once `count` deliveries were verified, or never (stopped by a signal).
 */
export async function listenForWebhooks(o: ListenOptions): Promise<{ server: Server; done: Promise<void> }> {
  const verifiers = o.secrets.map((s) => new Webhook(s));
  let verified = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const body = await readBody(req);
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let event: { type?: string; id?: string; data?: { type?: string; id?: string } } | undefined;
      let reason = 'no secret verifies the signature';
      for (const v of verifiers) {
        try {
          event = v.verify(body, headers) as typeof event;
          break;
        } catch (e) {
          if (e instanceof WebhookVerificationError) reason = e.message;
          else throw e;
        }
      }
      if (!event) {
        o.onRejected(`rejected ${headers['webhook-id'] || '(no webhook-id)'}: ${reason}`);
        res.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
        return;
      }
      o.onDelivery(
        o.json
          ? JSON.stringify({ webhook_id: headers['webhook-id'], event })
          : `${event.data?.type ?? event.type}\t${event.data?.id ?? ''}\t${headers['webhook-id']}`,
      );
      res.writeHead(204).end();
      verified += 1;
      if (o.count && verified >= o.count) finish();
    })().catch((e: unknown) => {
      o.onRejected(`rejected: ${(e as Error).message}`);
      if (!res.headersSent) res.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return { server, done };
}

export const addressOf = (server: Server): string => {
  const a = server.address() as AddressInfo;
  return `http://${a.address}:${a.port}`;
};
