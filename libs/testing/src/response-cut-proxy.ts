import { connect, createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a real HTTP server that cuts chosen exchanges after the server has answered but
 * before the client has read the answer: the request passes whole, the server runs it and writes its
 * response, and the proxy forwards only the response's status line and headers, then closes both
 * connections — the client has a status but no body, as when a connection drops while the body is read.
 * Deterministic: the cut is decided when the request line passes, never by a timer.
 */
export class ResponseCutProxy {
  /** The request lines (`POST /v1/… HTTP/1.1`) passed so far, in order. */
  readonly requests: string[] = [];
  /** How many responses were cut. */
  cuts = 0;
  private readonly armed: Array<{ fragment: string; left: number }> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards every connection to `target`. */
  static async start(target: URL): Promise<ResponseCutProxy> {
    const started: { proxy?: ResponseCutProxy } = {};
    const server = createServer((down) => started.proxy!.pipe(down, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    started.proxy = new ResponseCutProxy(server, address.port);
    return started.proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Cuts the responses to the next `n` requests whose request line contains `fragment`. */
  cutNext(fragment: string, n = 1): void {
    this.armed.push({ fragment, left: n });
  }

  /** How many passed requests' request line contains `fragment`. */
  count(fragment: string): number {
    return this.requests.filter((line) => line.includes(fragment)).length;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(down: Socket, target: URL): void {
    const up = connect(Number(target.port), target.hostname);
    this.sockets.add(down).add(up);
    let cutThis = false;
    let cut = false;
    down.on('data', (d: Buffer) => {
      const line = /^[A-Z]+ \S+ HTTP\/1\.[01]/.exec(d.toString('latin1'));
      if (line) {
        this.requests.push(line[0]);
        const arm = this.armed.find((a) => a.left > 0 && line[0].includes(a.fragment));
        if (arm) {
          arm.left -= 1;
          cutThis = true;
        }
      }
      up.write(d);
    });
    up.on('data', (d: Buffer) => {
      if (!cutThis) return void down.write(d);
      // The server answered: pass its status line and headers, never its body, and hang up.
      if (cut) return;
      cut = true;
      this.cuts += 1;
      const headersEnd = d.indexOf('\r\n\r\n');
      // down closes itself once the headers are flushed (end), not before (see `end` below).
      down.end(headersEnd >= 0 ? d.subarray(0, headersEnd + 4) : d, () => down.destroy());
      up.destroy();
    });
    const end = () => {
      if (!cut) down.destroy();
      up.destroy();
      this.sockets.delete(down);
      this.sockets.delete(up);
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  }
}
