import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A test client that writes bytes as given onto a socket and reads the answers back one by one (each
 * framed by its Content-Length), to see exactly what a server answers to a malformed request.
 */
export class RawHttpClient {
  private buf = Buffer.alloc(0);
  /** Every byte received, as latin1 (for answers not framed by a Content-Length, e.g. a stream). */
  received = '';
  private waiters: Array<() => void> = [];
  private socket: Socket;
  readonly closed: Promise<void>;
  ended = false;

  constructor(path: string) {
    this.socket = connect(path);
    this.socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.received += c.toString('latin1');
      this.wake();
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.socket.on('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  /** Resolves once the bytes are in the kernel (on a unix socket: in the server's receive queue). */
  write(raw: string): Promise<void> {
    return new Promise((resolve) => this.socket.write(Buffer.from(raw, 'latin1'), () => resolve()));
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** The next whole answer, or undefined once the connection closed without one. */
  async next(): Promise<RawResponse | undefined> {
    for (;;) {
      const r = this.parse();
      if (r) return r;
      if (this.ended) return undefined;
      await new Promise<void>((w) => this.waiters.push(w));
    }
  }

  /** Every answer until the server closes the connection. */
  async all(): Promise<RawResponse[]> {
    const out: RawResponse[] = [];
    for (let r = await this.next(); r; r = await this.next()) out.push(r);
    return out;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private parse(): RawResponse | undefined {
    const r = parseResponse(this.buf, this.ended);
    if (r) this.buf = this.buf.subarray(r.size);
    return r?.response;
  }
}

/**
 * The first answer in `buf` and its size in bytes (framed by its Content-Length), or undefined while it
 * is incomplete. Once the connection `ended`, an answer without its whole body (to HEAD) is returned as is.
 */
export function parseResponse(
  buf: Buffer,
  ended: boolean,
): { response: RawResponse; size: number } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [line, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const at = l.indexOf(':');
    headers[l.slice(0, at).trim().toLowerCase()] = l.slice(at + 1).trim();
  }
  const length = Math.min(Number(headers['content-length'] ?? 0), ended ? buf.length - end - 4 : Infinity);
  if (buf.length < end + 4 + length) return undefined;
  const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
  return {
    response: { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(line!)?.[1] ?? 0), headers, body },
    size: end + 4 + length,
  };
}

/** Every answer in what a connection received before it closed. */
export function parseResponses(buf: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  for (let r = parseResponse(buf, true); r; r = parseResponse(buf, true)) {
    out.push(r.response);
    buf = buf.subarray(r.size);
  }
  return out;
}

/** One exchange: writes `raw`, then reads every answer until the server closes the connection. */
export async function exchange(path: string, raw: string): Promise<RawResponse[]> {
  const c = new RawHttpClient(path);
  await c.write(raw);
  const all = await c.all();
  await c.closed;
  return all;
}
