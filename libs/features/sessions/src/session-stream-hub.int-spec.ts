import { createServer, connect, Server, Socket } from 'node:net';
import { createDataSource, SessionLog } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import {
  createTestDatabase,
  insertSessionRow,
  insertWorkspaceAndEnvironment,
  TestDatabase,
} from '@mango/testing';
import type { DataSource } from 'typeorm';
import { SessionStreamHub } from './session-stream-hub';

/** A real TCP proxy in front of PostgreSQL that can be cut (open sockets destroyed, new ones refused). */
class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private up = true;
  private server?: Server;
  port = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      if (!this.up) return client.destroy();
      const upstream = connect(this.targetPort, this.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.up = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The hub's LISTEN connection goes through a proxy that the test cuts; its reads go straight to the
 * database. An event committed while LISTEN is down is never notified, so only the re-read after the
 * reconnection delivers it: the PostgreSQL-restart fault of the matrix, where a stream stalled for good.
 */
describe('SessionStreamHub (real PostgreSQL, LISTEN through a cuttable TCP proxy)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let proxy: CuttableProxy;
  let hub: SessionStreamHub;

  let metrics: MangoMetrics;
  /** The hub's listener as `mango_background_loop_*` shows it: [failing, recoveries]. */
  const listenerState = async () =>
    Promise.all(
      ['mango_background_loop_failing', 'mango_background_loop_recoveries_total'].map(
        async (name) =>
          (
            (await metrics.registry.getSingleMetric(name)!.get()).values as Array<{
              labels: { loop?: string };
              value: number;
            }>
          ).find((v) => v.labels.loop === 'session_stream_listener')?.value,
      ),
    );

  beforeAll(async () => {
    db = await createTestDatabase('streamhub');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    const url = new URL(db.url);
    proxy = new CuttableProxy(url.hostname, Number(url.port || 5432));
    await proxy.start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    // The hub's listener connects to `options.url`; everything else is the real DataSource.
    const viaProxy = Object.create(ds, { options: { value: { ...ds.options, url: url.toString() } } });
    metrics = new MangoMetrics('api');
    hub = new SessionStreamHub(viaProxy as DataSource, metrics);
    await hub.onModuleInit();
  });

  afterAll(async () => {
    await hub?.onApplicationShutdown();
    await proxy?.close();
    await ds?.destroy();
    await db?.drop();
  });

  const newSession = async () => insertSessionRow(ds, await insertWorkspaceAndEnvironment(ds));

  it('delivers an event committed while LISTEN was down once LISTEN is back, exactly once', async () => {
    const log = new SessionLog(ds);
    const id = await newSession();
    const append = () =>
      ds.transaction(async (tx) =>
        log.append(
          tx,
          (await log.lock(tx, id))!,
          [{ type: 'agent.message', body: {}, processed: true, runnable: false }],
          new Date(),
        ),
      );
    const seen: string[] = [];
    let ended = 0;
    const unsubscribe = hub.subscribe(id, {
      last: 0n,
      deliver: (row) => seen.push(row.seq),
      end: () => ended++,
    });
    try {
      await append();
      await until(() => seen.length === 1);

      expect(await listenerState()).toEqual([0, 0]);
      proxy.cut(); // the listener's socket dies; its reconnects are refused
      await new Promise((r) => setTimeout(r, 500)); // the loss is noticed and its re-read has run
      expect(await listenerState()).toEqual([1, 0]); // and said
      await append(); // its NOTIFY reaches nobody
      await new Promise((r) => setTimeout(r, 500));
      expect(seen).toEqual(['1']); // nothing woke the stream yet
      proxy.restore();

      await until(() => seen.length === 2);
      await append(); // and notifications work again
      await until(() => seen.length === 3);
      expect(seen).toEqual(['1', '2', '3']);
      expect(ended).toBe(0);
      expect(await listenerState()).toEqual([0, 1]); // back, and said
    } finally {
      unsubscribe();
    }
  });
});
