/**
 * The fan-out bench's floor: one plain node:http server (no Nest, no database, no auth, no outbox) that
 * holds SSE streams and, on `POST /send`, writes one frame of the same shape and size as Mango's to every
 * stream open at that moment, then answers. Started as its own process by main.ts (like apps/api), so its
 * CPU is not the subscribers'; the same subscribers and the same measurement as Mango's fan-out read it.
 * The figure is what one Node process spends writing one frame to a thousand loopback sockets on this
 * machine, and what the subscribers' process spends reading them.
 * Routes: GET /healthz, GET /stream, POST /send?id=<event id>.
 */
import { createServer, type ServerResponse } from 'node:http';

const port = Number(process.env.BENCH_FANOUT_PORT);
if (!port) throw new Error('BENCH_FANOUT_PORT is not set');

const streams = new Set<ServerResponse>();
let seq = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://floor');
  if (url.pathname === '/healthz') return void res.end('ok');
  if (url.pathname === '/stream') {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
    });
    res.flushHeaders();
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  if (url.pathname === '/send' && req.method === 'POST') {
    const id = url.searchParams.get('id') ?? 'sevt_floor';
    seq += 1;
    // The size of a rendered user.interrupt event (id, type, processed_at, session_thread_id …).
    const data = JSON.stringify({
      id,
      type: 'user.interrupt',
      processed_at: new Date().toISOString(),
      session_thread_id: 'sthr_0000000000000000000000000000',
    });
    // Encoded once, like Mango's frameOf: every stream writes the same bytes.
    const frame = Buffer.from(`id: ${seq}\nevent: user.interrupt\ndata: ${data}\n\n`);
    for (const s of streams) s.write(frame);
    return void res.end('{}');
  }
  res.writeHead(404).end();
});
server.listen(port, '127.0.0.1');
