/**
 * The append bench's floor with an HTTP hop: one plain node:http server (no Nest, no auth, no admission)
 * that on `POST /append?session=<id>&workspace=<id>` reads the JSON body, runs the floor transaction
 * (append-floor.ts) on its one bare pg connection and answers the stored event, as Mango's API answers
 * an append. Started as its own process by main.ts (like apps/api), so its CPU is its own.
 * Routes: GET /healthz, POST /append. Env: BENCH_APPEND_PORT, BENCH_APPEND_DATABASE_URL.
 */
import { createServer } from 'node:http';
import { Client } from 'pg';
import { appendInterrupt } from './append-floor';

const port = Number(process.env.BENCH_APPEND_PORT);
const url = process.env.BENCH_APPEND_DATABASE_URL;
if (!port || !url) throw new Error('BENCH_APPEND_PORT and BENCH_APPEND_DATABASE_URL must be set');

async function main(): Promise<void> {
  const db = new Client({ connectionString: url, application_name: 'mango-bench-floor' });
  await db.connect();
  const server = createServer((req, res) => {
    const at = new URL(req.url ?? '/', 'http://floor');
    if (at.pathname === '/healthz') return void res.end('ok');
    if (at.pathname !== '/append' || req.method !== 'POST') return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      appendInterrupt(db, at.searchParams.get('session') ?? '', at.searchParams.get('workspace') ?? '').then(
        ({ id, seq }) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ data: [{ id, seq: Number(seq), type: 'user.interrupt', processed_at: null }] }),
          );
        },
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    });
  });
  server.listen(port, '127.0.0.1');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
