import { connect, createServer, Server, Socket } from 'node:net';

/**
 * A TCP gate in front of a real server (e.g. the API, as the supervisor's Work API socket is in front of
 * an item runner): while closed, connections are refused — as while a supervisor, the API or PostgreSQL
 * behind it restarts — and it opens again on the same port. It counts the HTTP requests it passes.
 */
export class TcpGate {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  /** The request lines (`GET /v1/… HTTP/1.1`) of the HTTP requests passed so far, in order. */
  readonly requests: string[] = [];

  constructor(
    readonly port: number,
    private readonly target: URL,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** How many passed requests' request line contains `fragment` (e.g. `/heartbeat`). */
  count(fragment: string): number {
    return this.requests.filter((line) => line.includes(fragment)).length;
  }

  async open(): Promise<void> {
    this.server = createServer((down) => {
      this.sockets.add(down);
      down.on('data', (d: Buffer) => {
        const line = /^[A-Z]+ \S+ HTTP\/1\.[01]/.exec(d.toString('latin1'));
        if (line) this.requests.push(line[0]);
      });
      const up = connect(Number(this.target.port), this.target.hostname);
      down.pipe(up).pipe(down);
      const end = () => {
        down.destroy();
        up.destroy();
        this.sockets.delete(down);
      };
      down.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** Cuts every open connection and refuses new ones until `open`. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
