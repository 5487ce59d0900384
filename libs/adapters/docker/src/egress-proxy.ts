import { chmodSync, rmSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import {
  type EgressContext,
  type EgressDecision,
  type EgressFailure,
  type EgressRule,
  type EgressTarget,
  judgeAddresses,
  judgeTarget,
} from '@mango/domain-egress';
import { type Resolver, systemResolver } from '@mango/platform-egress';
import { MAX_HEADER_LINES } from './request-framing';

/**
 * The sandbox egress proxy (ADR 0021, docs/operator-guide.md "Sandbox egress"): one per Session container,
 * in the supervisor, on a unix socket in the container's socket directory. It speaks `CONNECT host:port`
 * (tunnelled untouched: HTTPS stays end to end) and plain HTTP with absolute-form URLs, parsed by Node's
 * strict parser. Every connection is judged before it is opened: the Environment's policy on the name and
 * port (`judgeTarget`, before any lookup), then every address the proxy's own resolver returns
 * (`judgeAddresses`: never the control plane, private, link-local, metadata …); the connection opens to
 * exactly a judged address. Everything is bounded: connections at once, the request head, the lookup,
 * the connect, silence either way, a tunnel's lifetime and its bytes.
 */

/** Where the egress socket appears in a sandbox (inside the bind-mounted socket directory). */
export const SANDBOX_EGRESS_SOCKET_PATH = '/run/mango/egress.sock';
/** The HTTP proxy address tools use inside the sandbox (the runner's forwarder listens there). */
export const SANDBOX_EGRESS_PROXY_PORT = 3128;

export interface EgressLimits {
  /** Connections (tunnels and requests) a sandbox may hold open at once; more are closed unanswered. */
  maxConnections: number;
  /** From the first byte of a request (or CONNECT) to the end of its head. */
  headMs: number;
  /** The proxy's own name lookup. */
  resolveMs: number;
  /** Opening the upstream connection. */
  connectMs: number;
  /** Silence in both directions before a tunnel or request is cut. */
  idleMs: number;
  /** The longest a tunnel or request may last. */
  lifetimeMs: number;
  /** The most bytes one tunnel or request may carry in each direction. */
  maxBytes: number;
}

export const DEFAULT_EGRESS_LIMITS: EgressLimits = {
  maxConnections: 64,
  headMs: 10_000,
  resolveMs: 5_000,
  connectMs: 10_000,
  idleMs: 120_000,
  lifetimeMs: 3_600_000,
  maxBytes: 4 * 1024 * 1024 * 1024,
};

/** One connection the proxy allowed or refused (what the supervisor counts and logs for the Session). */
export interface EgressRecord {
  kind: 'connect' | 'http';
  host: string;
  port: number;
  allowed: boolean;
  /** The refusing rule (refused), or why an allowed connection failed (`upstream_failed`, a bound). */
  rule?: EgressRule;
  reason?: string;
  /** An allowed connection that ended badly: unreachable upstream, or a bound that cut it. */
  failure?: EgressFailure;
  /** Bytes from the sandbox to the upstream, and back (a plain HTTP request: its body and its answer body). */
  bytesOut: number;
  bytesIn: number;
}

export interface EgressProxyOptions {
  /** What the supervisor knows at this activation: the Environment's policy and the operator's settings. */
  context: EgressContext;
  /** The proxy's own resolver (the system's by default; tests and `MANGO_WORKER_EGRESS_HOSTS` pin names). */
  resolve?: Resolver;
  limits?: Partial<EgressLimits>;
  /** Told once per connection, when it ends. */
  onRecord?: (record: EgressRecord) => void;
}

/** Headers that describe one hop: never forwarded either way. */
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
  'http2-settings',
]);

/** `host:port` of a CONNECT (IPv6 in brackets), or undefined for anything else. */
export function parseAuthority(authority: string): EgressTarget | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/@?#]+):(\d{1,5})$/.exec(authority);
  if (!m) return undefined;
  return { host: m[1]!, port: Number(m[2]) };
}

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

function plainAnswer(status: number, decision: { rule?: string; reason: string }): string {
  const body = `${decision.reason}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    (decision.rule ? `x-mango-egress-rule: ${decision.rule}\r\n` : '') +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

export function createEgressProxy(o: EgressProxyOptions): { server: Server; close(): Promise<void> } {
  const limits = { ...DEFAULT_EGRESS_LIMITS, ...o.limits };
  const resolve = o.resolve ?? systemResolver;
  const open = new Set<Socket>();

  /** Both decisions, with the lookup in between; the first judged address to connect to, or the refusal. */
  async function decide(
    target: EgressTarget,
  ): Promise<{ address: string } | Extract<EgressDecision, { allowed: false }>> {
    const first = judgeTarget(o.context, target);
    if (!first.allowed) return first;
    const host = bare(target.host);
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      let timer: NodeJS.Timeout | undefined;
      try {
        const found = await Promise.race([
          resolve(host),
          new Promise<never>((_r, reject) => {
            timer = setTimeout(() => reject(new Error('lookup timed out')), limits.resolveMs);
          }),
        ]);
        addresses = found.map((a) => a.address);
      } catch {
        addresses = [];
      } finally {
        clearTimeout(timer);
      }
    }
    const second = judgeAddresses(o.context, target, addresses);
    return second.allowed ? { address: addresses[0]! } : second;
  }

  const server = createServer(
    {
      insecureHTTPParser: false,
      maxHeaderSize: 16 * 1024,
      headersTimeout: limits.headMs,
      requestTimeout: 0, // a request body may stream for as long as the bounds below allow
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, limits.headMs / 4)),
      keepAliveTimeout: 5_000,
    },
    (req, res) => void forwardHttp(req, res),
  );
  server.maxHeadersCount = 0;
  server.maxConnections = limits.maxConnections;
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code?.includes('TIMEOUT') ? 408 : 400;
    socket.end(
      plainAnswer(status, { reason: `malformed or slow proxy request (${err.code ?? 'parse error'})` }),
    );
  });
  server.on(
    'connect',
    (req: IncomingMessage, socket: Duplex, head: Buffer) => void tunnel(req, socket as Socket, head),
  );

  /** Bounds shared by a tunnel and a forwarded request: silence, lifetime and bytes each way. */
  function bound(a: Socket, b: Socket, rec: EgressRecord, done: () => void) {
    const cut = (why: NonNullable<EgressRecord['failure']>) => {
      rec.failure ??= why;
      a.destroy();
      b.destroy();
    };
    const life = setTimeout(() => cut('lifetime'), limits.lifetimeMs);
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => cut('idle'), limits.idleMs);
    };
    arm();
    a.on('data', (d: Buffer) => {
      rec.bytesOut += d.length;
      arm();
      if (rec.bytesOut > limits.maxBytes) cut('too_large');
    });
    b.on('data', (d: Buffer) => {
      rec.bytesIn += d.length;
      arm();
      if (rec.bytesIn > limits.maxBytes) cut('too_large');
    });
    let closed = 0;
    const onClose = () => {
      if (++closed < 2) {
        // One side gone: the other follows (a half-open tunnel holds nothing worth keeping).
        a.destroy();
        b.destroy();
        return;
      }
      clearTimeout(life);
      clearTimeout(idle);
      done();
    };
    a.once('close', onClose);
    b.once('close', onClose);
  }

  /** Opens the judged address within the connect bound. */
  function dial(address: string, port: number): Promise<Socket> {
    return new Promise((resolveDial, reject) => {
      const up = connect({ host: address, port });
      const timer = setTimeout(() => up.destroy(new Error('connect timed out')), limits.connectMs);
      up.once('connect', () => {
        clearTimeout(timer);
        resolveDial(up);
      });
      up.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  async function tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    const target = parseAuthority(req.url ?? '');
    if (!target || req.rawHeaders.length / 2 > MAX_HEADER_LINES) {
      client.end(plainAnswer(400, { rule: 'invalid_host', reason: 'CONNECT needs host:port' }));
      return;
    }
    const rec: EgressRecord = {
      kind: 'connect',
      host: bare(target.host),
      port: target.port,
      allowed: false,
      bytesOut: 0,
      bytesIn: 0,
    };
    const verdict = await decide(target);
    if (!('address' in verdict)) {
      rec.rule = verdict.rule;
      rec.reason = verdict.reason;
      client.end(plainAnswer(403, verdict));
      o.onRecord?.(rec);
      return;
    }
    rec.allowed = true;
    let up: Socket;
    try {
      up = await dial(verdict.address, target.port);
    } catch {
      rec.failure = 'upstream_failed';
      client.end(plainAnswer(502, { reason: `${rec.host}:${rec.port} could not be reached` }));
      o.onRecord?.(rec);
      return;
    }
    up.on('error', () => undefined);
    if (client.destroyed) {
      up.destroy();
      o.onRecord?.(rec);
      return;
    }
    bound(client, up, rec, () => o.onRecord?.(rec));
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) {
      rec.bytesOut += head.length;
      up.write(head);
    }
    client.pipe(up);
    up.pipe(client);
  }

  async function forwardHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refuse = (status: number, d: { rule?: string; reason: string }) => {
      req.resume();
      const body = `${d.reason}\n`;
      res.writeHead(status, {
        'content-type': 'text/plain; charset=utf-8',
        ...(d.rule ? { 'x-mango-egress-rule': d.rule } : {}),
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      res.end(body);
    };
    const raw = req.url ?? '';
    if (!/^http:\/\//i.test(raw))
      return refuse(400, {
        rule: 'invalid_host',
        reason: 'this is an egress proxy: send absolute http:// URLs, and HTTPS through CONNECT',
      });
    if (req.rawHeaders.length / 2 > MAX_HEADER_LINES)
      return refuse(400, { reason: `a request may have at most ${MAX_HEADER_LINES} header lines` });
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refuse(400, { rule: 'invalid_host', reason: 'the request URL is malformed' });
    }
    if (url.username || url.password)
      return refuse(400, { rule: 'invalid_host', reason: 'credentials in the URL are refused' });
    const target = { host: url.hostname, port: url.port ? Number(url.port) : 80 };
    const rec: EgressRecord = {
      kind: 'http',
      host: bare(target.host),
      port: target.port,
      allowed: false,
      bytesOut: 0,
      bytesIn: 0,
    };
    const verdict = await decide(target);
    if (!('address' in verdict)) {
      rec.rule = verdict.rule;
      rec.reason = verdict.reason;
      refuse(403, verdict);
      o.onRecord?.(rec);
      return;
    }
    rec.allowed = true;
    const headers: Record<string, string | string[]> = { host: url.host };
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i]!.toLowerCase();
      if (HOP_BY_HOP.has(k)) continue;
      const v = req.rawHeaders[i + 1]!;
      const had = headers[k];
      headers[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
    const up = httpRequest({
      host: verdict.address,
      port: target.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false, // one upstream connection per request: its bytes and bounds are this request's
      setHost: false,
    });
    const cut = (why: NonNullable<EgressRecord['failure']>) => {
      rec.failure ??= why;
      up.destroy();
      res.destroy();
    };
    const life = setTimeout(() => cut('lifetime'), limits.lifetimeMs);
    up.setTimeout(limits.idleMs, () => cut('idle')); // connecting, and silence either way
    req.on('data', (d: Buffer) => {
      rec.bytesOut += d.length;
      if (rec.bytesOut > limits.maxBytes) cut('too_large');
    });
    up.on('error', () => {
      if (res.headersSent) return res.destroy();
      rec.failure ??= 'upstream_failed';
      refuse(502, { reason: `${rec.host}:${rec.port} could not be reached` });
    });
    up.on('response', (answer) => {
      const back: Record<string, string | string[]> = {};
      for (let i = 0; i < answer.rawHeaders.length; i += 2) {
        const k = answer.rawHeaders[i]!.toLowerCase();
        if (HOP_BY_HOP.has(k)) continue;
        const v = answer.rawHeaders[i + 1]!;
        const had = back[k];
        back[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
      }
      answer.on('data', (d: Buffer) => {
        rec.bytesIn += d.length;
        if (rec.bytesIn > limits.maxBytes) cut('too_large');
      });
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    res.on('close', () => {
      clearTimeout(life);
      up.destroy();
      o.onRecord?.(rec);
    });
    req.pipe(up);
  }

  return {
    server,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface EgressSocket {
  path: string;
  close(): Promise<void>;
}

/**
 * Serves the egress proxy at `<dir>/egress.sock`: the container's existing socket directory, bind-mounted
 * read-only at /run/mango, so the sandbox sees it at SANDBOX_EGRESS_SOCKET_PATH.
 */
export async function openEgressSocket(dir: string, o: EgressProxyOptions): Promise<EgressSocket> {
  const path = join(dir, 'egress.sock');
  rmSync(path, { force: true });
  const proxy = createEgressProxy(o);
  await new Promise<void>((resolve, reject) => {
    proxy.server.once('error', reject);
    proxy.server.listen(path, () => resolve());
  }).catch(async (err: unknown) => {
    await proxy.close();
    throw err;
  });
  chmodSync(path, 0o666);
  return {
    path,
    close: async () => {
      await proxy.close();
      rmSync(path, { force: true });
    },
  };
}

/** The container environment that points tools at the forwarder (set only when egress is configured). */
export function egressProxyEnv(): string[] {
  const proxy = `http://127.0.0.1:${SANDBOX_EGRESS_PROXY_PORT}`;
  const noProxy = 'localhost,127.0.0.1,::1,mango.sandbox';
  return [
    `MANGO_EGRESS_SOCKET=${SANDBOX_EGRESS_SOCKET_PATH}`,
    `MANGO_EGRESS_PROXY_PORT=${SANDBOX_EGRESS_PROXY_PORT}`,
    `HTTP_PROXY=${proxy}`,
    `HTTPS_PROXY=${proxy}`,
    `http_proxy=${proxy}`,
    `https_proxy=${proxy}`,
    `NO_PROXY=${noProxy}`,
    `no_proxy=${noProxy}`,
  ];
}
