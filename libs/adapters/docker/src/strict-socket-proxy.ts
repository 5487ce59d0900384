import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { isWorkTokenRoute } from '@mango/domain-work-lease';
import { MAX_BODY_BYTES, requestFraming } from './request-framing';

/**
 * The bounds of one Work API socket (docs/operator-guide.md "Sandbox network"). Each socket has its own
 * upstream connections: nothing a sandbox writes can share a connection with another container's requests.
 */
export interface SocketLimits {
  /** The largest request body forwarded (413 above it). */
  maxBodyBytes: number;
  /** Connections the sandbox may hold open at once, and the upstream connections of its own pool. */
  maxConnections: number;
  /** From the first byte of a request to the end of its head; then to the end of its body. */
  requestHeadMs: number;
  requestBodyMs: number;
  /** From forwarding a request to the end of Mango's answer, headers and body. */
  deadlineMs: number;
  /**
   * The same for the long answers: the event stream (the runner reconnects with Last-Event-ID when it is
   * cut) and a Skill version's archive (up to `MANGO_SKILLS_MAX_BYTES`, 500 MiB).
   */
  longDeadlineMs: number;
  /** Any answer is cut after this long without a byte (the event stream pings every 15 s). */
  idleMs: number;
}

export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxBodyBytes: MAX_BODY_BYTES,
  maxConnections: 16,
  requestHeadMs: 10_000,
  requestBodyMs: 30_000,
  deadlineMs: 60_000,
  longDeadlineMs: 3_600_000,
  idleMs: 60_000,
};

/** Headers that describe one hop, not the request: never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
  'content-length',
  'http2-settings',
]);

/** The answers that may take long: the event stream and a Skill version's archive. */
const LONG_ANSWER = [
  /^\/v1\/sessions\/[^/?]+\/events\/stream(\?|$)/,
  /^\/v1\/skills\/[^/?]+\/versions\/[^/?]+\/content(\?|$)/,
];

function envelope(type: string, message: string): string {
  return JSON.stringify({
    type: 'error',
    error: { type, message },
    request_id: `req_sandbox_${randomBytes(8).toString('hex')}`,
  });
}

/** Answers locally in the error envelope and closes the connection: nothing of the request is forwarded. */
function refuse(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = envelope(type, message);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

/** The same answer written raw, for a connection whose request never reached a handler. */
function refuseRaw(socket: Duplex, status: number, type: string, message: string): void {
  const body = envelope(type, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

interface Connection {
  /** Requests of this connection not yet answered. */
  open: number;
  /** A request arrived before the previous one was answered: nothing more is forwarded, then it closes. */
  pipelined: boolean;
  /** The answer being written on it (the one Node gave the socket to). */
  current?: ServerResponse;
}

/**
 * An HTTP/1.1 server for one sandbox's socket: Node's strict parser (llhttp) for the sandbox side, the
 * framing rules of `requestFraming`, the Work token allowlist, no pipelining, and a private undici Pool
 * (one request per connection at a time) for the upstream side. A request is forwarded only once its
 * whole body has arrived, as a new request with its own Content-Length.
 */
export function createStrictSocketProxy(o: {
  /** Where the supervisor itself reaches Mango (MANGO_BASE_URL). */
  upstream: string;
  limits?: Partial<SocketLimits>;
}): { server: Server; close(): Promise<void> } {
  const limits = { ...DEFAULT_SOCKET_LIMITS, ...o.limits };
  const upstream = new URL(o.upstream);
  const prefix = upstream.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstream.origin, {
    connections: limits.maxConnections,
    pipelining: 1,
    headersTimeout: limits.longDeadlineMs, // the deadline below is the bound (per route)
    bodyTimeout: limits.idleMs,
    keepAliveTimeout: 4_000,
  });
  const connections = new WeakMap<object, Connection>();
  const connectionOf = (socket: object): Connection => {
    let c = connections.get(socket);
    if (!c) connections.set(socket, (c = { open: 0, pipelined: false }));
    return c;
  };

  const server = createServer(
    {
      insecureHTTPParser: false,
      requireHostHeader: false, // requestFraming refuses a missing or repeated Host in the envelope
      maxHeaderSize: 16 * 1024,
      headersTimeout: limits.requestHeadMs,
      requestTimeout: limits.requestHeadMs + limits.requestBodyMs,
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, limits.requestHeadMs / 4)),
      keepAliveTimeout: 5_000,
    },
    (req, res) => handle(req, res),
  );
  // No silent truncation: every header line reaches requestFraming, which refuses more than a few dozen.
  server.maxHeadersCount = 0;
  server.maxConnections = limits.maxConnections;

  // A request the parser refused (CL+TE, duplicate Content-Length, folding, bad tokens, a slow head).
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const conn = connections.get(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (conn && conn.open > 0) {
      // Bad bytes after a request not yet answered: it is refused too if it has not left, else cut.
      conn.pipelined = true;
      if (conn.current && !conn.current.headersSent)
        refuse(conn.current, 400, 'invalid_request_error', `malformed bytes after the request (${err.code})`);
      else socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT')
      refuseRaw(socket, 408, 'invalid_request_error', 'the request did not arrive in time');
    else if (err.code === 'HPE_HEADER_OVERFLOW')
      refuseRaw(socket, 431, 'invalid_request_error', 'the request head is too large');
    else
      refuseRaw(
        socket,
        400,
        'invalid_request_error',
        `malformed HTTP request (${err.code ?? 'parse error'})`,
      );
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    refuseRaw(socket, 400, 'invalid_request_error', 'CONNECT is refused here'),
  );

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const conn = connectionOf(req.socket);
    conn.open++;
    res.on('close', () => conn.open--);
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    // Node queues the answer of a request that arrived before the previous one was answered (it has no
    // socket yet): pipelining, refused — and so is the earlier request if it has not left yet.
    if (!res.socket || conn.pipelined) {
      conn.pipelined = true;
      req.resume();
      refuse(res, 400, 'invalid_request_error', 'pipelined requests are refused: wait for each answer');
      return;
    }
    conn.current = res;
    const framing = requestFraming(method, req.httpVersion, req.rawHeaders, limits.maxBodyBytes);
    if (!framing.ok) {
      req.resume();
      refuse(res, framing.status, framing.type, framing.message);
      return;
    }
    if (!isWorkTokenRoute(method, url)) {
      req.resume();
      refuse(
        res,
        403,
        'permission_error',
        `${method} ${url.split('?', 1)[0]} is not a Work token route; the sandbox socket forwards only those`,
      );
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const slow = setTimeout(
      () => refuse(res, 408, 'invalid_request_error', 'the request body did not arrive in time'),
      limits.requestBodyMs,
    );
    res.on('close', () => clearTimeout(slow));
    req.on('data', (c: Buffer) => {
      received += c.length;
      if (received <= framing.length) chunks.push(c);
    });
    req.on('end', () => {
      clearTimeout(slow);
      // After this turn, every request that arrived with this one's last bytes has been parsed.
      setImmediate(() => {
        if (res.writableEnded || res.destroyed) return;
        if (conn.pipelined)
          return refuse(
            res,
            400,
            'invalid_request_error',
            'pipelined requests are refused: wait for each answer',
          );
        if (received !== framing.length)
          return refuse(res, 400, 'invalid_request_error', 'the body does not match its Content-Length');
        void forward(req, res, method, url, framing.length ? Buffer.concat(chunks) : undefined);
      });
    });
  }

  async function forward(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: string,
    body: Buffer | undefined,
  ): Promise<void> {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    const ctrl = new AbortController();
    const long = method === 'GET' && LONG_ANSWER.some((re) => re.test(url));
    const ms = long ? limits.longDeadlineMs : limits.deadlineMs;
    let late = false;
    const deadline = setTimeout(() => {
      late = true;
      ctrl.abort();
    }, ms);
    res.on('close', () => {
      clearTimeout(deadline);
      ctrl.abort();
    });
    try {
      const up = await pool.request({
        method: method as 'GET',
        path: `${prefix}${url}`,
        headers,
        body,
        signal: ctrl.signal,
      });
      const back: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers))
        if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) back[k] = v;
      const length = up.headers['content-length'];
      if (typeof length === 'string') back['content-length'] = length;
      res.writeHead(up.statusCode, back);
      res.flushHeaders();
      await pipeline(up.body, res).catch(() => res.destroy());
    } catch (err) {
      if (late || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT')
        refuse(res, 504, 'api_error', `Mango did not answer within ${ms} ms`);
      else refuse(res, 502, 'api_error', 'Mango is unreachable from the supervisor');
    } finally {
      clearTimeout(deadline);
    }
  }

  return {
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.destroy();
    },
  };
}
