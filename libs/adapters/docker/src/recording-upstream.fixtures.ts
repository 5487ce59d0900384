import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the upstream's own parser saw it. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The body as received, bytes in latin1 (one char per byte). */
  body: string;
  /** The upstream connection it came on (the client's port on 127.0.0.1). */
  connection: number;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for Mango behind a Work API socket: it records every request
 * it parses and answers each with an echo of what it received (`{method, url, body, tag}`, body in latin1), so a client can
 * check that its answer is its own. `hold(match)` keeps matching requests unanswered until `release()`;
 * `stall(match)` answers their headers and then never finishes the body.
 */
export class RecordingUpstream {
  readonly requests: Recorded[] = [];
  /** Upstream connections, by client port, and whether each is still open. */
  readonly connections = new Map<number, { open: boolean }>();
  private held: Array<() => void> = [];
  private holdMatch?: (r: Recorded) => boolean;
  private stallMatch?: (r: Recorded) => boolean;
  private custom?: { match: (r: Recorded) => boolean; answer: (res: ServerResponse) => void };
  private waiters: Array<() => void> = [];
  private server!: Server;
  url = '';
  /** Added to every echo (a test tells clients in a sandbox something through it, e.g. `{ done: true }`). */
  note: Record<string, unknown> = {};

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.record(req, res));
    this.server.on('connection', (s: Socket) => {
      const port = s.remotePort!;
      this.connections.set(port, { open: true });
      s.on('close', () => {
        this.connections.get(port)!.open = false;
        this.notify();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  hold(match: (r: Recorded) => boolean): void {
    this.holdMatch = match;
  }

  stall(match: (r: Recorded) => boolean): void {
    this.stallMatch = match;
  }

  /** Answers matching requests with `answer` instead of the echo (e.g. a stream of pings). */
  respond(match: (r: Recorded) => boolean, answer: (res: ServerResponse) => void): void {
    this.custom = { match, answer };
  }

  release(): void {
    this.holdMatch = undefined;
    for (const go of this.held.splice(0)) go();
  }

  /** Resolves once `predicate` holds (checked after every request and every closed connection). */
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((r) => this.waiters.push(r));
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private record(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Recorded = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('latin1'),
        connection: req.socket.remotePort!,
      };
      this.requests.push(r);
      const answer = () => {
        if (this.custom?.match(r)) return this.custom.answer(res);
        const body = JSON.stringify({
          ...this.note,
          method: r.method,
          url: r.url,
          body: r.body,
          tag: req.headers['x-tag'] ?? null,
        });
        if (this.stallMatch?.(r)) {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length + 100 });
          res.write(body);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (this.holdMatch?.(r)) this.held.push(answer);
      else answer();
      this.notify();
    });
  }
}
