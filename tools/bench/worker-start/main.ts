/**
 * Benchmark: Docker worker start-up. Prints, for healthcheck Work through the real API and
 * `mango-worker docker` on the real dockerd (items run from this checkout, as in tests and `npm run up`),
 * once with the warm pool off (MANGO_WORKER_POOL_SIZE=0: a cold container per item), then with it on
 * (BENCH_POOL_SIZE, default 2: docs/operator-guide.md "Warm pool") for items back to back (the pool
 * refills while they run) and for items BENCH_POOL_SPACING_MS (5 s) apart (periodic checks: a full pool):
 *   - Ack → container running (Docker `start` event; cold only: a pooled container was running before),
 *     Ack → first heartbeat (`started_at`), and for cold starts the part after `start`: container running
 *     → first heartbeat (Node, the item runner's load, its stdin, the heartbeat's round trip);
 *   - healthcheck create → `succeeded` (`stopped_at − created_at`), p50/p95;
 * next to the floor measured in the same run: a raw `docker run --rm` of the same image, hardened and sealed
 * like a sandbox (`--network none`), whose process makes one HTTP request to a listener on a unix socket
 * bind-mounted into it, as the item runner reaches its Work API socket (spawn → running, spawn → first
 * request, running → first request).
 * All of it once per OCI runtime (BENCH_RUNTIMES, default `runc,runsc`: MANGO_WORKER_RUNTIME and the raw
 * floor's `--runtime`; a runtime the daemon does not declare is left out, saying so), then each runtime's
 * Ack → first heartbeat over its own raw floor and runsc's figures over runc's (docs/operator-guide.md "gVisor").
 * Printed figures only; never pass/fail. Run: npm run bench:worker-start (BENCH_WORKER_IMAGE=<tag> measures a
 * built worker image instead of items run from this checkout).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { logged, startApi, startApp } from '@mango/testing';
import { pct } from '../stats';
import { BENCH_FAIR_USE_ENV } from '../fair-use-env';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 15);
const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 2);
/** The pause before each item of the spaced pool run: long enough for the pool to refill. */
const SPACING_MS = Number(process.env.BENCH_POOL_SPACING_MS ?? 5000);
const RUNTIMES = (process.env.BENCH_RUNTIMES ?? 'runc,runsc').split(',').filter(Boolean);
const ROOT = join(__dirname, '../../..');
const LABEL = 'dev.mango.work_id';

const row = (name: string, xs: number[]) =>
  `${name.padEnd(46)} p50 ${pct(xs, 50).toFixed(0).padStart(6)} ms   p95 ${pct(xs, 95).toFixed(0).padStart(6)} ms   (n=${xs.length})`;

async function rawFloor(image: string, samples: number, runtime: string) {
  // A unix socket in a directory bind-mounted read-only, as the Work API socket is (gVisor needs the
  // daemon's --host-uds=open for it; a sealed runsc sandbox has no network to reach a TCP listener).
  const dir = mkdtempSync(join(tmpdir(), 'mango-bench-floor-'));
  chmodSync(dir, 0o755);
  const socket = join(dir, 'api.sock');
  let hit: (() => void) | undefined;
  const server = createServer((req, res) => {
    hit?.();
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(socket, r));
  chmodSync(socket, 0o666);
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const running: number[] = [];
  const firstRequest: number[] = [];
  const runningToRequest: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const name = `mango-bench-raw-${runtime}-${process.pid}-${i}`;
      const t0 = Date.now();
      const requested = new Promise<number>((resolve) => (hit = () => resolve(Date.now())));
      const child = spawn(
        'docker',
        [
          'run',
          '--rm',
          '--name',
          name,
          '--runtime',
          runtime,
          '--network',
          'none',
          '--volume',
          `${dir}:/run/mango:ro`,
          '--user',
          '1000:1000',
          '--read-only',
          '--cap-drop',
          'ALL',
          '--security-opt',
          'no-new-privileges',
          image,
          'node',
          '-e',
          `require('http').request({ socketPath: '/run/mango/api.sock', path: '/heartbeat', method: 'POST' }, () => process.exit(0)).end()`,
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise((r) => child.on('exit', r));
      for (;;) {
        const info = await docker
          .getContainer(name)
          .inspect()
          .catch(() => undefined);
        if (info?.State.StartedAt && !info.State.StartedAt.startsWith('0001')) {
          running.push(Date.parse(info.State.StartedAt) - t0);
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      firstRequest.push((await requested) - t0);
      runningToRequest.push(firstRequest.at(-1)! - running.at(-1)!);
      await exited;
    }
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { running, firstRequest, runningToRequest };
}

interface Run {
  ackToRunning: number[];
  ackToHeartbeat: number[];
  /** Cold starts only: Docker `start` event → first heartbeat (Node, the item runner's load, stdin, the heartbeat's round trip). */
  runningToHeartbeat: number[];
  createToAck: number[];
  createToSucceeded: number[];
  /** Items whose container started after their Ack (a cold start): with the pool on, pool misses. */
  cold: number;
}

async function measure(
  api: Awaited<ReturnType<typeof startApi>>,
  docker: Docker,
  workerImage: string,
  poolSize: number,
  /** Pause SPACING_MS before each item (periodic healthchecks: the pool has refilled by then). */
  spaced: boolean,
  runtime: string,
): Promise<Run> {
  const started = new Map<string, number>();
  const events = (await docker.getEvents({
    filters: { type: ['container'], event: ['start'], label: [LABEL] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  events.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      const e = JSON.parse(line);
      started.set(e.Actor.Attributes[LABEL], Math.round(e.timeNano / 1e6));
    }
  });
  const wsKey = (await api.issueKey('wrkspc_default')).api_key;
  const h = { authorization: `Bearer ${wsKey}`, 'content-type': 'application/json' };
  const env = (await (
    await fetch(`${api.url}/v1/environments`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ name: `bench-${runtime}-pool-${poolSize}${spaced ? '-spaced' : ''}` }),
    })
  ).json()) as { id: string };
  const supervisor = await startApp(
    'apps/supervisor/src/main.ts',
    {
      MANGO_ENVIRONMENT_KEY: (await api.issueKey('wrkspc_default', env.id)).api_key,
      MANGO_ENVIRONMENT_ID: env.id,
      MANGO_BASE_URL: api.url,
      DOCKER_HOST: process.env.DOCKER_HOST!,
      MANGO_WORKER_IMAGE: workerImage,
      // Items run from this checkout unless a built worker image (tools/docker/build-images.sh: mango-sandbox) is named.
      ...(process.env.BENCH_WORKER_IMAGE ? {} : { MANGO_WORKER_SOURCE_DIR: ROOT }),
      MANGO_SUPERVISOR_ID: `bench-${runtime}-pool-${poolSize}${spaced ? '-spaced' : ''}`,
      MANGO_WORKER_POOL_SIZE: String(poolSize),
      MANGO_WORKER_RUNTIME: runtime,
    },
    logged('docker engine connected'),
    60_000,
  );
  const run: Run = {
    ackToRunning: [],
    ackToHeartbeat: [],
    runningToHeartbeat: [],
    createToAck: [],
    createToSucceeded: [],
    cold: 0,
  };
  try {
    // One warm-up item (page cache, SWC cache, the pool's first fill) that is not counted.
    for (let i = 0; i <= SAMPLES; i++) {
      if (spaced) await new Promise((r) => setTimeout(r, SPACING_MS));
      const created = (await (
        await fetch(`${api.url}/v1/environments/${env.id}/work`, {
          method: 'POST',
          headers: h,
          body: JSON.stringify({ data: { type: 'healthcheck' } }),
        })
      ).json()) as { id: string };
      let w: any;
      for (;;) {
        w = await (
          await fetch(`${api.url}/v1/environments/${env.id}/work/${created.id}`, { headers: h })
        ).json();
        if (w.state === 'stopped') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      if (w.result?.status !== 'succeeded')
        throw new Error(`healthcheck ${w.id}: ${JSON.stringify(w.result)}`);
      if (poolSize === 0)
        for (let k = 0; k < 100 && !started.has(w.id); k++) await new Promise((r) => setTimeout(r, 10));
      if (i === 0) continue;
      const ack = Date.parse(w.acknowledged_at);
      if (started.has(w.id)) {
        run.cold++;
        run.ackToRunning.push(started.get(w.id)! - ack);
        run.runningToHeartbeat.push(Date.parse(w.started_at) - started.get(w.id)!);
      }
      run.ackToHeartbeat.push(Date.parse(w.started_at) - ack);
      run.createToAck.push(ack - Date.parse(w.created_at));
      run.createToSucceeded.push(Date.parse(w.stopped_at) - Date.parse(w.created_at));
    }
  } finally {
    events.destroy();
    await supervisor.stop();
  }
  return run;
}

interface RuntimeRuns {
  runtime: string;
  raw: Awaited<ReturnType<typeof rawFloor>>;
  cold: Run;
  pooled: Run;
  spaced: Run;
}

function print(r: RuntimeRuns, workerImage: string, image: string): void {
  const { raw, cold, pooled, spaced } = r;
  console.log(
    `\n=== runtime ${r.runtime}: worker start-up on ${workerImage}, ${SAMPLES} samples each (${process.env.BENCH_WORKER_IMAGE ? 'built image' : 'items run from this checkout'}; raw floor on ${image})\n`,
  );
  console.log(row('raw docker run --rm: spawn → running', raw.running));
  console.log(row('raw docker run --rm: spawn → first request', raw.firstRequest));
  console.log(row('raw docker run --rm: running → first request', raw.runningToRequest));
  console.log('\nwarm pool off (MANGO_WORKER_POOL_SIZE=0):');
  console.log(row('Mango: Ack → container running', cold.ackToRunning));
  console.log(row('Mango: Ack → first heartbeat', cold.ackToHeartbeat));
  console.log(row('Mango: container running → first heartbeat', cold.runningToHeartbeat));
  console.log(row('Mango: healthcheck create → Ack', cold.createToAck));
  console.log(row('Mango: healthcheck create → succeeded', cold.createToSucceeded));
  console.log(
    `\nwarm pool on (MANGO_WORKER_POOL_SIZE=${POOL_SIZE}), items back to back (the pool refills while they run; ${pooled.cold} of ${SAMPLES} started cold):`,
  );
  if (pooled.ackToRunning.length)
    console.log(row('Mango: Ack → container running (misses)', pooled.ackToRunning));
  console.log(row('Mango: Ack → first heartbeat', pooled.ackToHeartbeat));
  console.log(row('Mango: healthcheck create → Ack', pooled.createToAck));
  console.log(row('Mango: healthcheck create → succeeded', pooled.createToSucceeded));
  console.log(
    `\nwarm pool on (MANGO_WORKER_POOL_SIZE=${POOL_SIZE}), items ${SPACING_MS} ms apart (periodic healthchecks: the pool has refilled; ${spaced.cold} of ${SAMPLES} started cold):`,
  );
  console.log(row('Mango: Ack → first heartbeat', spaced.ackToHeartbeat));
  console.log(row('Mango: healthcheck create → succeeded', spaced.createToSucceeded));
  const floor = pct(raw.firstRequest, 50);
  const ratio = (run: Run) => (pct(run.ackToHeartbeat, 50) / floor).toFixed(2);
  console.log(
    `\n${r.runtime}: Ack → first heartbeat vs its raw floor (p50): pool off ${ratio(cold)}×, pool on back to back ${ratio(pooled)}×, pool on, items spaced ${ratio(spaced)}×`,
  );
}

async function main(): Promise<void> {
  const image = process.env.MANGO_BASE_IMAGE!;
  const workerImage = process.env.BENCH_WORKER_IMAGE ?? image;
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const declared = Object.keys(((await docker.info()) as { Runtimes?: object }).Runtimes ?? {});
  const runtimes = RUNTIMES.filter((r) => declared.includes(r));
  for (const r of RUNTIMES.filter((x) => !declared.includes(x)))
    console.log(
      `runtime ${r} left out: the daemon declares only ${declared.join(', ')} (tools/ci/services.sh declares runsc)`,
    );
  const api = await startApi('bench-worker', BENCH_FAIR_USE_ENV);
  const results: RuntimeRuns[] = [];
  try {
    for (const runtime of runtimes)
      results.push({
        runtime,
        cold: await measure(api, docker, workerImage, 0, false, runtime),
        pooled: await measure(api, docker, workerImage, POOL_SIZE, false, runtime),
        spaced: await measure(api, docker, workerImage, POOL_SIZE, true, runtime),
        raw: { running: [], firstRequest: [], runningToRequest: [] },
      });
  } finally {
    await api.close();
  }
  for (const r of results) r.raw = await rawFloor(image, SAMPLES, r.runtime);
  for (const r of results) print(r, workerImage, image);
  const runc = results.find((r) => r.runtime === 'runc');
  const runsc = results.find((r) => r.runtime === 'runsc');
  if (runc && runsc) {
    const over = (a: number[], b: number[]) => (pct(a, 50) / pct(b, 50)).toFixed(2);
    const line = (name: string, a: number[], b: number[]) =>
      console.log(`  ${name.padEnd(54)} ${over(a, b)}×`);
    console.log('\nrunsc over runc (p50):');
    line('raw docker run --rm: spawn → running', runsc.raw.running, runc.raw.running);
    line('raw docker run --rm: spawn → first request', runsc.raw.firstRequest, runc.raw.firstRequest);
    line('Mango, pool off: Ack → first heartbeat', runsc.cold.ackToHeartbeat, runc.cold.ackToHeartbeat);
    line(
      'Mango, pool off: healthcheck create → succeeded',
      runsc.cold.createToSucceeded,
      runc.cold.createToSucceeded,
    );
    line(
      'Mango, pool on, items spaced: Ack → first heartbeat',
      runsc.spaced.ackToHeartbeat,
      runc.spaced.ackToHeartbeat,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
