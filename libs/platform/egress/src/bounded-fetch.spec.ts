import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fetch as undiciFetch } from 'undici';
import { boundedFetch, FetchLike, OutboundLimitError, outboundLimitIn } from './bounded-fetch';

const plainFetch = undiciFetch as unknown as FetchLike;

/** A real HTTP server on 127.0.0.1 that records when each of its sockets closes. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const closed: Promise<void>[] = [];
  const server: Server = createServer(handler);
  server.on('connection', (s: Socket) => closed.push(new Promise((r) => s.once('close', () => r()))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    /** Resolves once every connection the server accepted has been closed. */
    allClosed: () => Promise.all(closed),
    connections: () => closed.length,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Writes `chunk` every `everyMs` until the client goes away. */
function trickle(res: ServerResponse, chunk: Buffer, everyMs: number) {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const t = setInterval(() => res.write(chunk), everyMs);
  res.on('close', () => clearInterval(t));
}

describe('boundedFetch (an outbound call is bounded in time, size and by cancellation)', () => {
  it('reads a small answer whole', async () => {
    const s = await serve((_q, r) => r.end('hello'));
    try {
      const res = await boundedFetch(plainFetch, { deadlineMs: 5000, maxBytes: 100 })(s.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('hello');
    } finally {
      await s.close();
    }
  });

  it('the deadline covers the body: a 200 that trickles a byte at a time fails at the deadline and the connection closes', async () => {
    const s = await serve((_q, r) => trickle(r, Buffer.from('x'), 50));
    try {
      const res = await boundedFetch(plainFetch, { deadlineMs: 400, maxBytes: 1 << 20 })(s.url);
      expect(res.status).toBe(200); // the headers came in time
      const err = await res.text().catch((e: unknown) => e);
      expect(outboundLimitIn(err)?.limit).toBe('deadline');
      await s.allClosed();
      expect(s.connections()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('an endless body is cut at the cap while reading (never buffered whole), and the connection closes', async () => {
    const chunk = Buffer.alloc(16 * 1024, 97);
    const s = await serve((_q, r) => trickle(r, chunk, 1));
    try {
      const res = await boundedFetch(plainFetch, { deadlineMs: 60_000, maxBytes: 64 * 1024 })(s.url);
      const err = await res.arrayBuffer().catch((e: unknown) => e);
      const limit = outboundLimitIn(err);
      expect(limit?.limit).toBe('too_large');
      // Counted as they arrived: at most the cap plus the one chunk that crossed it.
      expect(limit!.bytesRead).toBeGreaterThan(64 * 1024);
      expect(limit!.bytesRead).toBeLessThanOrEqual(64 * 1024 + 64 * 1024);
      await s.allClosed();
    } finally {
      await s.close();
    }
  });

  it('a declared content-length above the cap is refused before any body byte is read', async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      r.write('x');
    });
    try {
      const err = await boundedFetch(plainFetch, { deadlineMs: 60_000, maxBytes: 1024 })(s.url).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutboundLimitError);
      expect((err as OutboundLimitError).limit).toBe('too_large');
      expect((err as OutboundLimitError).bytesRead).toBe(0);
      await s.allClosed();
    } finally {
      await s.close();
    }
  });

  it('a stream that stalls mid-body fails at the idle bound, well before the deadline', async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200);
      r.write('first');
    });
    try {
      const res = await boundedFetch(plainFetch, { deadlineMs: 600_000, idleMs: 300, maxBytes: 1024 })(s.url);
      const err = await res.text().catch((e: unknown) => e);
      expect(outboundLimitIn(err)?.limit).toBe('idle');
      await s.allClosed();
    } finally {
      await s.close();
    }
  });

  it("the caller's cancellation aborts the request mid-body (not a bound) and the connection closes", async () => {
    let firstByte: () => void = () => undefined;
    const started = new Promise<void>((r) => (firstByte = r));
    const s = await serve((_q, r) => {
      trickle(r, Buffer.from('x'), 20);
      firstByte();
    });
    try {
      const cancel = new AbortController();
      const res = await boundedFetch(plainFetch, { deadlineMs: 600_000, maxBytes: 1 << 20 })(s.url, {
        signal: cancel.signal,
      });
      const reading = res.text().catch((e: unknown) => e);
      await started;
      cancel.abort(new Error('activity cancelled'));
      const err = await reading;
      expect(outboundLimitIn(err)).toBeNull();
      expect(err).toBeInstanceOf(Error);
      await s.allClosed();
    } finally {
      await s.close();
    }
  });

  it('an already-cancelled signal sends nothing', async () => {
    let hits = 0;
    const s = await serve((_q, r) => {
      hits++;
      r.end();
    });
    try {
      const cancel = new AbortController();
      cancel.abort(new Error('gone'));
      await expect(
        boundedFetch(plainFetch, { deadlineMs: 1000, maxBytes: 10 })(s.url, { signal: cancel.signal }),
      ).rejects.toThrow('gone');
      expect(hits).toBe(0);
    } finally {
      await s.close();
    }
  });
});
