import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as received by {@link TestServer}. */
export interface RecordedRequest {
  method: string;
  /** Raw request target as sent on the wire, e.g. `/v1/agents?limit=2`. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Raw body text ('' when none was sent). */
  body: string;
  /** Parsed JSON body (undefined when none was sent). */
  json: unknown;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

let requestCounter = 0;

/** A fresh `req_` + 26-character id, as the real server sends. */
export function newRequestId(): string {
  requestCounter += 1;
  return `req_01JD2Y3QX9V5M8K7R6T4W${String(requestCounter).padStart(5, '0')}`;
}

/**
 * A real HTTP server on 127.0.0.1 (ephemeral port) answering each request with the next scripted
 * handler. An unscripted request gets a non-retryable 418 so the test fails loudly.
 */
export class TestServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Handler[] = [];
  private fallback: Handler | undefined;

  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const target = new URL(req.url ?? '/', 'http://127.0.0.1');
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          path: target.pathname,
          query: target.searchParams,
          headers: req.headers,
          body,
          json: body === '' ? undefined : JSON.parse(body),
        };
        this.requests.push(recorded);
        const handler = this.queue.shift() ?? this.fallback ?? unscripted;
        Promise.resolve(handler(recorded, res)).catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(599).end(String(err));
        });
      });
    });
  }

  static async start(): Promise<TestServer> {
    const instance = new TestServer();
    await new Promise<void>((resolve) => instance.server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  get baseUrl(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues handlers answered in order, one per incoming request. */
  script(...handlers: Handler[]): this {
    this.queue.push(...handlers);
    return this;
  }

  /** Answers every request not covered by the script. */
  always(handler: Handler): this {
    this.fallback = handler;
    return this;
  }

  get lastRequest(): RecordedRequest {
    const last = this.requests[this.requests.length - 1];
    if (!last) throw new Error('no request received');
    return last;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Responds with a JSON body and a `request-id` header. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': newRequestId(), ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Responds 204 with no body (and a `request-id` header). */
export function noContent(): Handler {
  return (_req, res) => {
    res.writeHead(204, { 'request-id': newRequestId() });
    res.end();
  };
}

/** Responds with Mango's error envelope; the header and body carry the same request id. */
export function errorEnvelope(
  status: number,
  type: string,
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Handler {
  return (_req, res) => {
    const requestId = newRequestId();
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
    res.end(
      JSON.stringify({
        type: 'error',
        error: details === undefined ? { type, message } : { type, message, details },
        request_id: requestId,
      }),
    );
  };
}

/** Responds with an arbitrary raw body. */
export function raw(status: number, body: string, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'request-id': newRequestId(), ...headers });
    res.end(body);
  };
}

/** Never responds (the socket stays open until the client gives up or the server closes). */
export function hang(): Handler {
  return () => undefined;
}

/** Destroys the connection without any response. */
export function dropConnection(): Handler {
  return (_req, res) => {
    res.socket?.destroy();
  };
}

/** Runs `handler` after `ms` milliseconds. */
export function delayed(ms: number, handler: Handler): Handler {
  return (req, res) =>
    new Promise<void>((resolve) => {
      setTimeout(() => {
        if (!res.destroyed) void handler(req, res);
        resolve();
      }, ms);
    });
}

const unscripted: Handler = (req, res) => {
  res.writeHead(418, { 'content-type': 'application/json', 'request-id': newRequestId() });
  res.end(
    JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: `test server: unscripted ${req.method} ${req.url}` },
      request_id: 'req_unscripted',
    }),
  );
};
