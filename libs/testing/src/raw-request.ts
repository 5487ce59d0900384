import { request as httpRequest } from 'node:http';

export interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The response body parsed as JSON when it is JSON, else its text. */
  body: any;
  /** Time from the request's start to the response's status line and headers (ms, high resolution). */
  msToResponse: number;
  /** Body bytes the client had handed to the socket when the response arrived. */
  bytesSentAtResponse: number;
  /** Whether the server closed the connection (`Connection: close`) rather than keep it. */
  connectionClose: boolean;
}

const CHUNK = 64 * 1024;

/**
 * One HTTP request on a fresh connection (no agent), its body written in 64 KiB chunks with
 * backpressure, and no more once the response has arrived: a server that answers before reading the
 * body gets no more of it, and `bytesSentAtResponse` says how much it had been sent by then. Errors
 * writing after the response (the server closed the connection: EPIPE, ECONNRESET) are expected and
 * ignored; an error before any response rejects.
 */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
    /** Sends `Expect: 100-continue` and writes the body only after the server's `100 Continue`. */
    expectContinue?: boolean;
  } = {},
): Promise<RawResult> {
  const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let sent = 0;
    let answered = false;
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          ...(body ? { 'content-length': String(body.length) } : {}),
          ...(options.expectContinue ? { expect: '100-continue' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        answered = true;
        const msToResponse = Number(process.hrtime.bigint() - started) / 1e6;
        const bytesSentAtResponse = sent;
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('error', () => undefined);
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text.length > 0)
            parsed = JSON.parse(text);
          req.destroy();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: parsed,
            msToResponse,
            bytesSentAtResponse,
            connectionClose: res.headers.connection === 'close',
          });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (!body) return void req.end();
    // One chunk per turn of the event loop, so that a response is seen as soon as it arrives rather
    // than after the client has pushed everything it could into the socket.
    const writeMore = () => {
      if (answered || sent >= body.length) return;
      const chunk = body.subarray(sent, sent + CHUNK);
      sent += chunk.length;
      if (sent >= body.length) return void req.end(chunk);
      if (req.write(chunk)) setImmediate(writeMore);
      else req.once('drain', writeMore);
    };
    if (options.expectContinue) req.once('continue', writeMore);
    else writeMore();
  });
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The sum of a metric's samples in the Prometheus text exposition at `url`: 0 when it is declared
 * (`# TYPE`) with no sample yet, undefined when the app does not export it at all.
 */
export async function metricValue(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  if (!text.includes(`# TYPE ${name} `)) return undefined;
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) sum += Number(m[2]);
  }
  return sum;
}
