/**
 * Benchmark: Environment Work claims. Prints, for the real API over HTTP and for a bare-SQL
 * `FOR UPDATE SKIP LOCKED` loop on the same database in the same run (the floor):
 *   - enqueue → Poll-returns latency (p50/p99) with one long-polling worker;
 *   - Poll+Ack throughput (claims/s) with 1, 4 and 16 pollers, and the ratio API / bare SQL per count.
 * Fairness: both sides get one database connection per poller at most — the API's pool is 20
 * (MANGO_DB_POOL_SIZE, ≥ 16 pollers, so no request waits for a connection), the bare loop opens one
 * connection per poller; each side drains its own batch of BENCH_ITEMS items from the same table, API
 * first. The bare loop is a floor, not the protocol: it skips the key check, lost leases and the overdue
 * check, and makes two round trips per claim as Poll + Ack do. Also printed per poller count: the HTTP
 * floor of the same process (two `GET /healthz` per claim, no database), which bounds what any HTTP
 * claim can reach on this machine. Under each row: CPU time per claim (/proc, 10 ms ticks) of the API
 * process, of this process (the load generator) and of the PostgreSQL server, for each side, with the
 * load average: steadier than rates on a shared machine.
 * Printed figures only; never pass/fail. Run: npm run bench:work-claim (services from tools/ci/services.sh).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Pool } from 'undici';
import { newId } from '@mango/platform-ids';
import { INSPECTOR_NODE_OPTIONS, startApi, startCpuProfile } from '@mango/testing';
import { pct } from '../stats';
import { BENCH_FAIR_USE_ENV } from '../fair-use-env';

const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
const THROUGHPUT_ITEMS = Number(process.env.BENCH_ITEMS ?? 2000);

const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** CPU time (user + system) a process has used so far, ms (Linux /proc, 10 ms ticks; NaN elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
/** Fields after the command name of /proc/<pid>/stat (ppid is [1], utime [11], stime [12]). */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU time (ms) of the PostgreSQL server so far: the postmaster and every live child (backends, walwriter,
 * …). A backend that exits takes its time with it, so read this before closing connections.
 */
function postgresCpuMs(postmaster: number): number {
  let sum = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const f = statFields(pid);
      if (Number(pid) === postmaster || Number(f[1]) === postmaster)
        sum += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // exited meanwhile
    }
  }
  return sum;
}

/** This process's CPU time so far, ms (the load generator: undici for the API, node-postgres for bare SQL). */
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const perClaim = (ms: number, n: number) => `${(ms / n).toFixed(3)} ms`;

async function main(): Promise<void> {
  // BENCH_CPU_PROFILE=<dir>: the API's CPU profile of each Poll+Ack phase is written there (through the
  // inspector: Node refuses --cpu-prof in NODE_OPTIONS).
  const api = await startApi('bench', {
    ...BENCH_FAIR_USE_ENV,
    MANGO_DB_POOL_SIZE: '20',
    ...(CPU_PROFILE ? { NODE_OPTIONS: INSPECTOR_NODE_OPTIONS } : {}),
  });
  const { url, db } = api;
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const wsKey = (await api.issueKey('wrkspc_default')).api_key;
    const env = (await (
      await fetch(`${url}/v1/environments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${wsKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { id: string };
    const envKey = (await api.issueKey('wrkspc_default', env.id)).api_key;
    const h = { authorization: `Bearer ${envKey}` };
    const enqueue = (n: number) =>
      sql.query(
        `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
         SELECT id, 'wrkspc_default', $2, 'session', 'sesn_' || substr(id, 6), 'queued', '{}', clock_timestamp() FROM unnest($1::text[]) id;
         `,
        [Array.from({ length: n }, () => newId('work')), env.id],
      );
    // The postmaster: the parent of this connection's backend (NaN figures when PostgreSQL is not local).
    const postmaster = await sql
      .query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      .then((r) => Number(statFields(r.rows[0]!.pid)[1]))
      .catch(() => NaN);
    const notify = () => sql.query(`SELECT pg_notify('mango_work', $1)`, [env.id]);

    // ── Latency: one long-polling worker, items enqueued one at a time ───────────────────────────────
    const apiLatency: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const polling = fetch(`${url}/v1/environments/${env.id}/work/poll?block_ms=10000`, { headers: h }).then(
        (r) => r.json(),
      );
      await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      await sql.query('BEGIN');
      await enqueue(1);
      await notify();
      await sql.query('COMMIT');
      const item = (await polling) as { id: string };
      apiLatency.push(performance.now() - t0);
      await fetch(`${url}/v1/environments/${env.id}/work/${item.id}/ack`, { method: 'POST', headers: h });
    }
    const listener = new Client({ connectionString: db.url });
    await listener.connect();
    await listener.query('LISTEN mango_work');
    const floor: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const woke = new Promise<void>((resolve) => listener.once('notification', () => resolve()));
      const t0 = performance.now();
      await sql.query('BEGIN');
      await enqueue(1);
      await notify();
      await sql.query('COMMIT');
      await woke;
      await listener.query(
        `UPDATE work_items SET state = 'starting', claimed_at = now() WHERE id = (
           SELECT id FROM work_items WHERE environment_id = $1 AND state = 'queued' AND claimed_at IS NULL
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`,
        [env.id],
      );
      floor.push(performance.now() - t0);
    }
    await listener.end();
    console.log('\nenqueue → Poll returns (one long-polling worker)');
    console.log(
      `  mango API   p50 ${fmt(pct(apiLatency, 50))}  p99 ${fmt(pct(apiLatency, 99))}   (n=${apiLatency.length})`,
    );
    console.log(
      `  bare SQL    p50 ${fmt(pct(floor, 50))}  p99 ${fmt(pct(floor, 99))}   (LISTEN + SKIP LOCKED claim)`,
    );

    // ── Throughput: P pollers draining N items with Poll + Ack ──────────────────────────────────────
    // One keep-alive connection per poller through undici's Pool (`request`, every body read to the
    // end), for the API and for the HTTP floor alike: the load generator shares the 2 cores with the API
    // and PostgreSQL, and global fetch's WHATWG layers cost the client about as much CPU per request as
    // the API spent serving it, which the bare-SQL side (node-postgres) never pays.
    console.log(`\nPoll+Ack throughput (${THROUGHPUT_ITEMS} items)`);
    for (const pollers of [1, 4, 16]) {
      const http = new Pool(url, { connections: pollers });
      const get = async (path: string, headers?: Record<string, string>) => {
        const res = await http.request({ method: 'GET', path, headers });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}: ${text}`);
        return text;
      };
      await enqueue(THROUGHPUT_ITEMS);
      let claimed = 0;
      const apiPid = api.app.child.pid;
      const load = loadavg()[0]!.toFixed(2);
      const [apiCpu0, client0, pg0] = [cpuMs(apiPid), selfCpuMs(), postgresCpuMs(postmaster)];
      const profiling = CPU_PROFILE ? await startCpuProfile(api.app.logs()) : undefined;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: pollers }, async () => {
          for (;;) {
            const item = JSON.parse(await get(`/v1/environments/${env.id}/work/poll`, h)) as { id?: string };
            if (!item.id) return;
            const ack = await http.request({
              method: 'POST',
              path: `/v1/environments/${env.id}/work/${item.id}/ack`,
              headers: h,
            });
            await ack.body.text();
            if (ack.statusCode !== 200) throw new Error(`Ack answered ${ack.statusCode}`);
            claimed++;
          }
        }),
      );
      const apiRate = claimed / ((performance.now() - t0) / 1000);
      if (profiling) {
        const path = join(CPU_PROFILE!, `api-poll-ack-${pollers}.cpuprofile`);
        await profiling.stop(path);
        console.log(`  (API CPU profile: ${path})`);
      }
      const [apiCpu, apiClientCpu, apiPgCpu] = [
        cpuMs(apiPid) - apiCpu0,
        selfCpuMs() - client0,
        postgresCpuMs(postmaster) - pg0,
      ];

      await enqueue(THROUGHPUT_ITEMS);
      const clients = await Promise.all(
        Array.from({ length: pollers }, async () => {
          const c = new Client({ connectionString: db.url });
          await c.connect();
          return c;
        }),
      );
      let bare = 0;
      const [bareClient0, barePg0] = [selfCpuMs(), postgresCpuMs(postmaster)];
      const t1 = performance.now();
      await Promise.all(
        clients.map(async (c) => {
          for (;;) {
            const r = await c.query(
              `UPDATE work_items SET claimed_at = now(), token_digest = sha256(gen_random_uuid()::text::bytea) WHERE id = (
                 SELECT id FROM work_items WHERE environment_id = $1 AND state = 'queued' AND claimed_at IS NULL
                 ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`,
              [env.id],
            );
            if (r.rowCount === 0) return;
            await c.query(`UPDATE work_items SET state = 'starting', acknowledged_at = now() WHERE id = $1`, [
              r.rows[0].id,
            ]);
            bare++;
          }
        }),
      );
      const bareRate = bare / ((performance.now() - t1) / 1000);
      const [bareClientCpu, barePgCpu] = [selfCpuMs() - bareClient0, postgresCpuMs(postmaster) - barePg0];
      await Promise.all(clients.map((c) => c.end()));

      // The HTTP floor: the same number of clients, two bodiless requests per "claim", no database.
      let pairs = 0;
      const floorCpu0 = cpuMs(apiPid);
      const t2 = performance.now();
      await Promise.all(
        Array.from({ length: pollers }, async () => {
          while (pairs < THROUGHPUT_ITEMS) {
            pairs++;
            await get('/healthz');
            await get('/healthz');
          }
        }),
      );
      const httpRate = pairs / ((performance.now() - t2) / 1000);
      const floorCpu = cpuMs(apiPid) - floorCpu0;
      await http.close();
      console.log(
        `  ${String(pollers).padStart(2)} pollers   mango API ${apiRate.toFixed(0).padStart(6)} claims/s   bare SQL ${bareRate.toFixed(0).padStart(6)} claims/s   ratio ${(apiRate / bareRate).toFixed(2)}   (HTTP floor ${httpRate.toFixed(0)} pairs/s, API / HTTP floor ${(apiRate / httpRate).toFixed(2)})`,
      );
      console.log(
        `              CPU per claim: API process ${perClaim(apiCpu, claimed)} (HTTP floor ${perClaim(floorCpu, pairs)} per pair); load generator ${perClaim(apiClientCpu, claimed)} for the API, ${perClaim(bareClientCpu, bare)} for bare SQL; PostgreSQL ${perClaim(apiPgCpu, claimed)} for the API, ${perClaim(barePgCpu, bare)} for bare SQL   (load average ${load})`,
      );
    }
    console.log(
      '\ntargets: p50 ≤ 10 ms, p99 ≤ 50 ms, ≥ 2,000 claims/s (2-core machine; API, PostgreSQL and the load generator share it)',
    );
  } finally {
    await sql.end();
    await api.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
