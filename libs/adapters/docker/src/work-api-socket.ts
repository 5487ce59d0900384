import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createStrictSocketProxy, type SocketLimits } from './strict-socket-proxy';

/** Where the socket appears inside a sandbox container (its directory is bind-mounted read-only). */
export const SANDBOX_SOCKET_DIR = '/run/mango';
export const SANDBOX_SOCKET_PATH = `${SANDBOX_SOCKET_DIR}/api.sock`;
/** The base URL the runner uses over the socket: the host part is never resolved. */
export const SANDBOX_BASE_URL = 'http://mango.sandbox';

export interface WorkApiSocket {
  /** The host directory holding `api.sock`; bind-mount it at SANDBOX_SOCKET_DIR. */
  dir: string;
  close(): Promise<void>;
}

/**
 * The only way out of a sealed sandbox (`--network none`): a unix socket per Work container that forwards
 * the Work token's routes (WORK_TOKEN_ROUTES) to Mango and answers everything else 403 locally. It adds no
 * credential of its own — requests carry the Work token the runner received over stdin — and the API still
 * authorizes each one. One socket per container, removed with it. The socket is a strict proxy
 * (`createStrictSocketProxy`): unambiguous framing only, no pipelining, and upstream connections of its
 * own, so nothing one sandbox writes can reach Mango as another request or on another container's
 * connection (docs/security-model-notes/work-api-socket.md).
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
  /** Tighter bounds than DEFAULT_SOCKET_LIMITS (tests). */
  limits?: Partial<SocketLimits>;
}): Promise<WorkApiSocket> {
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
  const proxy = createStrictSocketProxy({ upstream: o.upstream, limits: o.limits });
  const server = proxy.server;
  const socketPath = join(dir, 'api.sock');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  }).catch(async (err: unknown) => {
    await proxy.close();
    throw err;
  });
  chmodSync(socketPath, 0o666);
  const own = lstatSync(socketPath).ino;
  return {
    dir,
    close: async () => {
      // Only while the directory still holds this socket: a later launch of the same Work item (a
      // reclaim) may already serve its own socket there. (Checked first: closing unlinks the socket.)
      const mine = lstatSync(socketPath, { throwIfNoEntry: false })?.ino === own;
      await proxy.close();
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
