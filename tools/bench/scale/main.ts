/**
 * Benchmark: scale. N Sessions (default 1,000; `--sessions N` or BENCH_SESSIONS for fewer), each sent one
 * text-only user.message at the same moment, against real processes (apps/api, apps/orchestrator on
 * Temporal, PostgreSQL, the scripted Messages API answering instantly). Prints, for one orchestrator and
 * then for two on the same task queue (Temporal spreads the steps):
 *   - turns/s (burst start → last idle) next to the admission floor of the same burst (all POSTs answered);
 *   - message → idle p50/p99 (client send time → the idle event's commit time);
 *   - how many Sessions ended idle{end_turn}, how many session.error events were recorded (target 0);
 *   - each orchestrator's RSS (peak during the burst, and after it) and the memory per idle Session;
 * then what the idle Sessions cost over a quiet window (BENCH_IDLE_WINDOW_MS, default 20 s): CPU of the
 * orchestrators and the API, transactions committed in the database, and for a sample of the Sessions'
 * workflows their pending activities and history growth (an idle Session should cost no Temporal
 * activity and no polling);
 * and, at the end, the API's memory per open SSE stream. Memory per idle Session and per stream is what
 * the process retains: apps/api and the orchestrators run with their loopback inspector, and a full GC
 * (collectGarbage, @mango/testing) precedes each of those samples. Printed figures only; never pass/fail.
 * Run: npm run bench:scale [-- --sessions 200].
 */
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import {
  AppProcess,
  collectGarbage,
  INSPECTOR_NODE_OPTIONS,
  startApi,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';
import { pct, pool } from '../stats';
import { BENCH_FAIR_USE_ENV } from '../fair-use-env';

const flag = process.argv.indexOf('--sessions');
const SESSIONS = Number(flag > 0 ? process.argv[flag + 1] : (process.env.BENCH_SESSIONS ?? 1000));
const STREAMS = Number(process.env.BENCH_STREAMS ?? Math.min(SESSIONS, 500));
const CLIENT_CONCURRENCY = Number(process.env.BENCH_CLIENT_CONCURRENCY ?? 100);
const BURST_DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS ?? 900_000);
const IDLE_WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS ?? 20_000);
/** Idle Sessions whose workflows are described before and after the quiet window. */
const IDLE_SAMPLE = 50;
if (!Number.isInteger(SESSIONS) || SESSIONS < 1) throw new Error('--sessions must be a positive integer');

const ms = (v: number) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`);
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

type Json = Record<string, any>;

/** CPU time (user + system) a process has used so far, ms (Linux /proc, 10 ms ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size of a process, bytes (Linux /proc). */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Retained memory of a process started with INSPECTOR_NODE_OPTIONS: two full collections half a second
 * apart (the first frees what the second compacts and returns), then the heap it reports.
 */
async function settle(app: AppProcess) {
  await collectGarbage(app.logs());
  await new Promise((r) => setTimeout(r, 500));
  return collectGarbage(app.logs());
}

async function main(): Promise<void> {
  const model = await startScriptedModel();
  // The scripted server answers from a queue: one instant text reply per request, enough for both bursts.
  model.script(
    ...Array.from({ length: SESSIONS * 2 + 10 }, () => ({ content: [{ type: 'text', text: 'ok' }] })),
  );
  const api = await startApi('benchscale', {
    ...BENCH_FAIR_USE_ENV,
    MANGO_DB_POOL_SIZE: '20',
    MANGO_LOG_LEVEL: 'warn',
    NODE_OPTIONS: INSPECTOR_NODE_OPTIONS,
  });
  const taskQueue = `bench-scale-${Date.now()}`;
  const orchestrators: AppProcess[] = [];
  const addOrchestrator = async () => {
    const app = await startOrchestrator(api.db.url, {
      taskQueue,
      modelUrl: model.url,
      modelKey: 'sk-bench',
      env: {
        NODE_OPTIONS: INSPECTOR_NODE_OPTIONS,
        ...(process.env.BENCH_ORCHESTRATOR_ENV ? JSON.parse(process.env.BENCH_ORCHESTRATOR_ENV) : {}),
      },
      timeoutMs: 180_000,
    });
    orchestrators.push(app);
    return app;
  };
  const controllers: AbortController[] = [];
  try {
    const key = (await api.issueKey('wrkspc_default')).api_key;
    await addOrchestrator();
    // Warm-up: one turn, so the workflow bundle, the connections and the JIT are ready before the burst.
    await burst(1, 'warm-up', { print: false });

    const one = await burst(SESSIONS, '1 orchestrator');
    await addOrchestrator();
    await burst(1, 'warm-up 2', { print: false });
    const two = await burst(SESSIONS, '2 orchestrators');
    console.log(
      `1 → 2 orchestrators: turns/s ×${(two.turnsPerSecond / one.turnsPerSecond).toFixed(2)}, ` +
        `message → idle p50 ×${(two.p50 / one.p50).toFixed(2)}, total peak RSS ${mib(one.peakTotal)} → ${mib(two.peakTotal)}`,
    );

    await idleCost([...one.ids, ...two.ids]);

    // ── Memory per open SSE stream (apps/api) ──────────────────────────────────────────────────────
    const apiPid = api.app.child.pid!;
    const idleSessions = two.ids.slice(0, STREAMS);
    const heapBefore = await settle(api.app);
    const before = rss(apiPid);
    let open = 0;
    await pool(idleSessions, 50, async (id) => {
      const c = new AbortController();
      controllers.push(c);
      const res = await fetch(`${api.url}/v1/sessions/${id}/events/stream`, {
        headers: { authorization: `Bearer ${key}` },
        signal: c.signal,
      });
      if (res.ok) open++;
      // Keep reading so the stream stays open and flows.
      void res.body?.pipeTo(new WritableStream()).catch(() => undefined);
    });
    await new Promise((r) => setTimeout(r, 2000));
    const heapAfter = await settle(api.app);
    const after = rss(apiPid);
    const perStream = (bytes: number) => kib(bytes / Math.max(open, 1));
    console.log(
      `SSE streams: ${open} open on one API process (after a full GC): API RSS ${mib(before)} → ${mib(after)}, ` +
        `≈ ${perStream(after - before)} per stream; V8 heap used ${mib(heapBefore.usedSize)} → ${mib(heapAfter.usedSize)}, ` +
        `≈ ${perStream(heapAfter.usedSize - heapBefore.usedSize)} per stream`,
    );
  } finally {
    for (const c of controllers) c.abort();
    for (const o of orchestrators) await o.stop();
    await api.close();
    await model.close();
  }

  /**
   * What idle Sessions cost while nothing happens: over IDLE_WINDOW_MS with every Session idle, the CPU of
   * the orchestrators and the API, the transactions committed in the database (PostgreSQL publishes an
   * idle backend's counts up to 10 s late, so they are read after a further 11 s), and, for a sample of
   * the Sessions' workflows (Temporal's describe), pending activities and history events added.
   */
  async function idleCost(ids: string[]) {
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const temporal = new Client({
        connection,
        namespace: process.env.MANGO_TEMPORAL_NAMESPACE ?? 'default',
      });
      const step = Math.max(1, Math.floor(ids.length / IDLE_SAMPLE));
      const sample = ids.filter((_, i) => i % step === 0).slice(0, IDLE_SAMPLE);
      const describe = () => Promise.all(sample.map((id) => temporal.workflow.getHandle(id).describe()));
      const xacts = async () =>
        Number(
          (
            await api.sql<{ n: string }>(
              `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
            )
          )[0]!.n,
        );
      // Quiet first: the bursts' stragglers (final syncs, relays, GC) settle.
      await new Promise((r) => setTimeout(r, 5_000));
      const before = await describe();
      const pids = [...orchestrators.map((o) => o.child.pid!), api.app.child.pid!];
      const cpu0 = pids.map(cpuMs);
      const x0 = await xacts();
      await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
      const cpu = pids.map((p, i) => cpuMs(p) - cpu0[i]!);
      const after = await describe();
      await new Promise((r) => setTimeout(r, 11_000));
      // The reads of this function (≤ 2) are transactions too; the 11 s wait publishes the window's.
      const x1 = await xacts();
      const running = after.filter((d) => d.status.name === 'RUNNING').length;
      const pending = after.reduce((n, d) => n + (d.raw.pendingActivities?.length ?? 0), 0);
      const grown = after.reduce((n, d, i) => n + (d.historyLength - before[i]!.historyLength), 0);
      const seconds = IDLE_WINDOW_MS / 1000;
      console.log(
        `idle cost: ${ids.length} idle Sessions, ${seconds} s with nothing sent (target: no Temporal activity, no polling)`,
      );
      console.log(
        `  workflows sampled ${sample.length}: running ${running}   pending activities ${pending}   history events added ${grown}`,
      );
      console.log(
        `  CPU over the window: ${orchestrators.map((_, i) => `orchestrator ${i + 1} ${cpu[i]} ms`).join('   ')}   API ${cpu[cpu.length - 1]} ms` +
          `   database transactions ${x1 - x0} in ${seconds + 11} s (the window and the 11 s after: ${((x1 - x0) / (seconds + 11)).toFixed(1)}/s, all processes)`,
      );
    } finally {
      await connection.close();
    }
  }

  /** Creates `n` Sessions, sends each one message at once, waits until each has ended its turn. */
  async function burst(n: number, label: string, options: { print?: boolean } = {}) {
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`POST ${path} → ${res.status} ${text}`);
      return JSON.parse(text) as Json;
    };
    const env = (await post('/v1/environments', { name: `bench-${label}` })).id as string;
    const agent = (await post('/v1/agents', { name: `chat-${label}`, model: 'claude-sonnet-4-6' }))
      .id as string;
    const ids = await pool(
      Array.from({ length: n }, (_, i) => i),
      20,
      async () => (await post('/v1/sessions', { agent, environment_id: env })).id as string,
    );
    const pids = orchestrators.map((o) => o.child.pid!);
    // Retained memory: a full GC in each orchestrator before the samples that make the per-Session figure.
    const gc = () => Promise.all(orchestrators.map(settle));
    const heapBefore = await gc();
    const rssBefore = pids.map(rss);
    const peak = [...rssBefore];
    const sampler = setInterval(() => pids.forEach((p, i) => (peak[i] = Math.max(peak[i]!, rss(p)))), 200);
    const sentAt = new Map<string, number>();
    const t0 = Date.now();
    let admitted = 0;
    let admissionEnd = 0;
    // Every message is issued at t0; the client keeps at most CLIENT_CONCURRENCY requests in flight (a
    // thousand simultaneous connections to one starved process get reset), so message → idle includes
    // the client's own queueing.
    for (const id of ids) sentAt.set(id, t0);
    const sends = pool(ids, CLIENT_CONCURRENCY, async (id, i) => {
      await post(`/v1/sessions/${id}/events`, {
        events: [{ type: 'user.message', content: [{ type: 'text', text: `hello ${i}` }] }],
      });
      admitted++;
      admissionEnd = Date.now();
    });
    const idleAt = new Map<string, { at: number; stop: string }>();
    let errors = 0;
    const deadline = t0 + BURST_DEADLINE_MS;
    let sendError: unknown;
    sends.catch((e: unknown) => (sendError = e));
    while (idleAt.size < n && Date.now() < deadline && !sendError) {
      await new Promise((r) => setTimeout(r, 250));
      const rows = await api.sql<{ session_id: string; type: string; at: Date; stop: string | null }>(
        `SELECT session_id, type, created_at AS at, body->'stop_reason'->>'type' AS stop
           FROM session_events WHERE session_id = ANY($1::text[]) AND type IN ('session.status_idle', 'session.error')`,
        [ids],
      );
      errors = rows.filter((r) => r.type === 'session.error').length;
      for (const r of rows)
        if (r.type === 'session.status_idle' && !idleAt.has(r.session_id))
          idleAt.set(r.session_id, { at: new Date(r.at).getTime(), stop: r.stop ?? '' });
    }
    clearInterval(sampler);
    if (sendError) throw sendError;
    await sends;
    const heapAfter = await gc();
    const rssAfter = pids.map(rss);
    const latencies = ids.filter((id) => idleAt.has(id)).map((id) => idleAt.get(id)!.at - sentAt.get(id)!);
    const last = Math.max(...[...idleAt.values()].map((v) => v.at));
    const wall = (last - t0) / 1000;
    const endTurn = [...idleAt.values()].filter((v) => v.stop === 'end_turn').length;
    const result = {
      ids,
      turnsPerSecond: idleAt.size / wall,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      peakTotal: peak.reduce((a, b) => a + b, 0),
    };
    if (options.print === false) return result;
    const admissionRate = admitted / ((admissionEnd - t0) / 1000);
    console.log(
      `${label}: ${n} Sessions, one text-only turn each, all issued at once (≤ ${CLIENT_CONCURRENCY} requests in flight)`,
    );
    console.log(
      `  idle{end_turn} ${endTurn}/${n}   other idle ${idleAt.size - endTurn}   never idle ${n - idleAt.size}   session.error ${errors}   (target: all end_turn, 0 errors)`,
    );
    console.log(
      `  turns/s ${result.turnsPerSecond.toFixed(1)} (burst ${wall.toFixed(1)} s)   admission floor ${admissionRate.toFixed(1)} msgs/s (all ${admitted} POSTs answered in ${ms(admissionEnd - t0)})   ratio ${(result.turnsPerSecond / admissionRate).toFixed(2)}`,
    );
    console.log(`  message → idle p50 ${ms(result.p50)}   p99 ${ms(result.p99)}`);
    pids.forEach((_, i) =>
      console.log(
        `  orchestrator ${i + 1} RSS: before ${mib(rssBefore[i]!)}   peak ${mib(peak[i]!)}   after ${mib(rssAfter[i]!)}`,
      ),
    );
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const grown = sum(rssAfter) - sum(rssBefore);
    const heapGrown = sum(heapAfter.map((h) => h.usedSize)) - sum(heapBefore.map((h) => h.usedSize));
    console.log(
      `  memory per idle Session (orchestrator after − before, each after a full GC, / ${n}): RSS ≈ ${kib(grown / n)}   V8 heap used ≈ ${kib(heapGrown / n)}`,
    );
    return result;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
