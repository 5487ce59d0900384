import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BoundedReplyError, fetchBounded } from './bounded-reply';

/**
 * The bounds of a token endpoint exchange against real HTTP servers on loopback: one that answers its
 * headers and then trickles one byte per second, one that sends a 50 MB body, one that never answers.
 * Assertions are on the failure kind and the bytes read, never on elapsed time.
 */
describe('fetchBounded: one deadline over headers and body, a size cap counted while reading, cancellation', () => {
  const servers: Server[] = [];
  afterAll(() => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  });
  async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<URL> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/token`);
  }
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected the exchange to fail');
      },
      (e: unknown) => e as BoundedReplyError,
    );
  const post = { method: 'POST', body: 'grant_type=refresh_token' };

  it('headers then one byte per second: fails with kind deadline, having read only what trickled in', async () => {
    let sent = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const tick = setInterval(() => {
        if (res.destroyed) return clearInterval(tick);
        res.write('x');
        sent += 1;
      }, 1000);
      res.on('close', () => clearInterval(tick));
    });
    const err = await failure(fetchBounded(fetch, url, post, { deadlineMs: 1500, maxBytes: 65_536 }));
    expect(err).toBeInstanceOf(BoundedReplyError);
    expect(err.kind).toBe('deadline');
    expect(err.message).toBe('no complete answer within 1500 ms');
    expect(err.bytesRead).toBeLessThanOrEqual(sent);
    expect(err.bytesRead).toBeLessThanOrEqual(65_536);
  });

  it('a 50 MB body: fails with kind too_large, reads at most the cap, and the transfer stops', async () => {
    const total = 50 * 1024 * 1024;
    let written = 0;
    let closed!: () => void;
    const stopped = new Promise<void>((r) => (closed = r));
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => closed());
      pump();
    });
    const cap = 64 * 1024;
    const err = await failure(fetchBounded(fetch, url, post, { deadlineMs: 60_000, maxBytes: cap }));
    expect(err.kind).toBe('too_large');
    expect(err.message).toBe(`the answer is larger than ${cap} bytes`);
    expect(err.bytesRead).toBeLessThanOrEqual(cap);
    await stopped; // the client dropped the connection…
    expect(written).toBeLessThan(total); // …long before the server had sent it all
  });

  it('a body within the cap is read whole', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"access_token":"a"}');
    });
    const reply = await fetchBounded(fetch, url, post, { deadlineMs: 60_000, maxBytes: 20 });
    expect(reply).toEqual({
      status: 200,
      contentType: 'application/json',
      text: '{"access_token":"a"}',
      bytesRead: 20,
    });
  });

  it("the caller's signal ends an exchange waiting for headers (kind aborted) and one already aborted never sends", async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => (arrived = r));
    let requests = 0;
    const url = await serve(() => {
      requests += 1;
      arrived(); // never answers
    });
    const ac = new AbortController();
    const pending = failure(
      fetchBounded(fetch, url, post, { deadlineMs: 60_000, maxBytes: 1024, signal: ac.signal }),
    );
    await arrival;
    ac.abort();
    expect((await pending).kind).toBe('aborted');
    const before = requests;
    const again = await failure(
      fetchBounded(fetch, url, post, { deadlineMs: 60_000, maxBytes: 1024, signal: ac.signal }),
    );
    expect(again.kind).toBe('aborted');
    expect(requests).toBe(before);
  });

  it('a refused connection is kind unreachable with the cause kept', async () => {
    const url = await serve(() => undefined);
    const port = url.port;
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    const err = await failure(
      fetchBounded(fetch, new URL(`http://127.0.0.1:${port}/token`), post, {
        deadlineMs: 60_000,
        maxBytes: 1024,
      }),
    );
    expect(err.kind).toBe('unreachable');
    expect(err.cause).toBeDefined();
  });
});
