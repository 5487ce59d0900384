import { createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { FILES_ROUTES } from './openapi-contract';

/**
 * The ingress of a deployment in one test process: one base URL, `/v1/files*`, `/v1/skills*` and
 * `/v1/memory_stores*` to apps/files and everything else to apps/api (as nginx in `npm run up`, the Helm
 * ingress and the Compose stack route). Streams both ways, so SSE and uploads pass through unbuffered.
 * `beforeForward` injects faults: a request is forwarded only once the promise it returns resolves.
 */
export async function startIngress(o: {
  apiUrl: string;
  filesUrl: string;
  beforeForward?: (method: string, url: string) => Promise<void> | void;
  /** The port to listen on (default: any free one), e.g. one chosen before apps/api starts so that its
   * MANGO_PUBLIC_BASE_URL (a Work secret's api_base_url) can name the ingress. */
  port?: number;
}): Promise<{ url: string; close(): Promise<void> }> {
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(FILES_ROUTES.test(`${req.method} ${req.url}`) ? o.filesUrl : o.apiUrl);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  const server: Server = createServer((req, res) => {
    const held = o.beforeForward?.(req.method ?? 'GET', req.url ?? '/');
    if (!held) return forward(req, res);
    req.pause();
    void held.then(() => forward(req, res));
  });
  // Like apps/api: an idle client connection is kept 65 s, not Node's 5 s (a client reusing its pooled
  // connection as the server closes it got a reset; Schemathesis reported it as a network error once).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
