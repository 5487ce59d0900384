import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * The sandbox end of egress (ADR 0021): tools speak to an HTTP proxy at a TCP address (`HTTP_PROXY`), the
 * supervisor's egress proxy listens on a unix socket mounted into the container. This forwarder listens on
 * 127.0.0.1 inside the container's own network namespace (its loopback exists even with
 * `--network none`) and pipes every connection to that socket, byte for byte: it parses nothing and
 * decides nothing — the proxy judges every request.
 */
export interface EgressForwarder {
  port: number;
  close(): Promise<void>;
}

/** The most connections forwarded at once (the proxy has its own, equal bound). */
const MAX_CONNECTIONS = 64;

export async function startEgressForwarder(o: {
  /** The supervisor's egress socket, e.g. /run/mango/egress.sock. */
  socketPath: string;
  /** 0: any free port (tests). */
  port: number;
}): Promise<EgressForwarder> {
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    const up = connect(o.socketPath);
    const done = () => {
      client.destroy();
      up.destroy();
      open.delete(client);
    };
    client.on('error', done);
    up.on('error', done);
    client.on('close', done);
    up.on('close', done);
    client.pipe(up);
    up.pipe(client);
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  // Never what keeps the runner alive: the item ends when its Work does.
  server.unref();
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : o.port,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The proxy variables the Bash tool's shell gets (its environment is an allowlist), when egress is on. */
export function egressShellEnv(port: number | undefined): Record<string, string> {
  if (port === undefined) return {};
  const proxy = `http://127.0.0.1:${port}`;
  const noProxy = 'localhost,127.0.0.1,::1,mango.sandbox';
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}
