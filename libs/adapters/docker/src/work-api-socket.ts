import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { isWorkTokenRoute } from '@mango/domain-work-lease';

/** Where the socket appears inside a sandbox container (its directory is bind-mounted read-only). */
export const SANDBOX_SOCKET_DIR = '/run/mango';
export const SANDBOX_SOCKET_PATH = `${SANDBOX_SOCKET_DIR}/api.sock`;
/** The base URL the runner uses over the socket: the host part is never resolved. */
export const SANDBOX_BASE_URL = 'http://mango.sandbox';

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
]);

export interface WorkApiSocket {
  /** The host directory holding `api.sock`; bind-mount it at SANDBOX_SOCKET_DIR. */
  dir: string;
  close(): Promise<void>;
}

function refuse(res: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({
    type: 'error',
    error: { type, message },
    request_id: `req_sandbox_${randomBytes(8).toString('hex')}`,
  });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The only way out of a sealed sandbox (`--network none`): a unix socket per Work container that forwards
 * the Work token's routes (WORK_TOKEN_ROUTES) to Mango and answers everything else 403 locally. It adds no
 * credential of its own — requests carry the Work token the runner received over stdin — and the API still
 * authorizes each one. One socket per container, removed with it.
 */
export async function openWorkApiSocket(o: {
  /** A directory only this supervisor writes, e.g. /run/mango-worker. */
  root: string;
  workId: string;
  /** Where the supervisor itself reaches Mango (MANGO_BASE_URL). */
  upstream: string;
  /**
   * Serve again in the existing directory a running container has bind-mounted (an adopted container of
   * an earlier supervisor run): only the stale `api.sock` is replaced. The directory itself must stay —
   * the container's mount holds that directory, so a new one at the same path would never reach it.
   */
  reuse?: boolean;
  /**
   * Serve in this existing directory instead of the Work item's (`reuse` semantics): the per-slot
   * directory a pooled container has had bind-mounted, empty, since before its Work was claimed.
   */
  dir?: string;
}): Promise<WorkApiSocket> {
  const upstream = new URL(o.upstream);
  const prefix = upstream.pathname.replace(/\/+$/, '');
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  const dir = o.dir ?? workApiSocketDir(o.root, o.workId);
  if (o.reuse || o.dir) {
    const found = lstatSync(dir, { throwIfNoEntry: false });
    if (!found?.isDirectory() || found.isSymbolicLink())
      throw new Error(`the Work API socket directory ${dir} is gone; the container cannot be reached again`);
    rmSync(join(dir, 'api.sock'), { force: true });
  } else {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  }
  chmodSync(dir, 0o755); // whatever the caller's umask: the sandbox uid must reach the socket
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
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
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v;
    const out = send(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port || undefined,
        method,
        path: `${prefix}${url}`,
        headers,
      },
      (up) => {
        const back: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(up.headers))
          if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) back[k] = v;
        res.writeHead(up.statusCode ?? 502, back);
        res.flushHeaders();
        up.pipe(res);
        up.on('error', () => res.destroy());
      },
    );
    out.on('error', () => {
      if (!res.headersSent) refuse(res, 502, 'api_error', 'Mango is unreachable from the supervisor');
      else res.destroy();
    });
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  server.keepAliveTimeout = 5_000;
  const socketPath = join(dir, 'api.sock');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o666);
  const own = lstatSync(socketPath).ino;
  return {
    dir,
    close: async () => {
      // Only while the directory still holds this socket: a later launch of the same Work item (a
      // reclaim) may already serve its own socket there. (Checked first: closing unlinks the socket.)
      const mine = lstatSync(socketPath, { throwIfNoEntry: false })?.ino === own;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (mine) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A pool slot's socket directory: `pool-…` never collides with a Work item's (`work_…`). */
export const POOL_SOCKET_PREFIX = 'pool-';

/** The host directory of a Work item's socket (bind-mounted at SANDBOX_SOCKET_DIR in its container). */
export function workApiSocketDir(root: string, workId: string): string {
  return join(root, workId.toLowerCase());
}
