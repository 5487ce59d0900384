/**
 * Benchmark: tool turns through real Docker sandboxes. N Sessions (default 100; `--sessions N` or
 * BENCH_SESSIONS) on one self-hosted Environment, each sent one user.message at the same moment, against
 * real processes: apps/api, apps/orchestrator on Temporal, PostgreSQL, the scripted Messages API (each turn
 * calls the `bash` tool once, `echo hi`, then ends) and one `mango-worker docker` supervisor on the real
 * dockerd running items from this checkout. Prints:
 *   - how many Sessions ended idle{end_turn} with their tool result recorded, how many session.error events
 *     (target: all, 0);
 *   - message → idle p50/p99 (client send time → the idle event's commit time), and the whole burst's wall;
 *   - the supervisor's peak RSS (VmHWM of /proc/<pid>/status, and the highest VmRSS sampled) and its
 *     container concurrency: MANGO_MAX_CONCURRENT_ITEMS and the most Mango containers seen at once.
 * The supervisor claims at most MANGO_MAX_CONCURRENT_ITEMS (at most 64) items at once; the rest of the
 * Sessions' Work waits in the queue (each activation ends MANGO_SESSION_IDLE_MS after its Session went
 * idle). Printed figures only; never pass/fail. Run: npm run bench:docker-turns [-- --sessions 20].
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import {
  AppProcess,
  logged,
  startApi,
  startApp,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';
import { pct, pool } from '../stats';
import { BENCH_FAIR_USE_ENV } from '../fair-use-env';

const flag = process.argv.indexOf('--sessions');
const SESSIONS = Number(flag > 0 ? process.argv[flag + 1] : (process.env.BENCH_SESSIONS ?? 100));
const CONCURRENCY = Number(process.env.BENCH_SUPERVISOR_CONCURRENCY ?? 16);
const IDLE_MS = Number(process.env.BENCH_SESSION_IDLE_MS ?? 500);
const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS ?? 900_000);
if (!Number.isInteger(SESSIONS) || SESSIONS < 1) throw new Error('--sessions must be a positive integer');
const ROOT = join(__dirname, '../../..');
const WORK_LABEL = 'dev.mango.work_id';
const SUPERVISOR_ID = `bench-docker-${process.pid}`;

const ms = (v: number) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`);
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

type Json = Record<string, any>;

/** VmRSS and VmHWM (the kernel's peak resident set) of a process, bytes. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

async function main(): Promise<void> {
  const model = await startScriptedModel();
  // Each turn: one `bash` call, then (once its result is in the request) a closing text reply.
  let calls = 0;
  const reply = (body: { messages: Array<{ role: string; content: unknown }> }) => {
    const last = body.messages.at(-1);
    const answered =
      Array.isArray(last?.content) && last.content.some((b: { type?: string }) => b.type === 'tool_result');
    return answered
      ? { content: [{ type: 'text', text: 'done' }] }
      : {
          content: [
            { type: 'tool_use', id: `toolu_bench_${++calls}`, name: 'bash', input: { command: 'echo hi' } },
          ],
          stop_reason: 'tool_use',
        };
  };
  model.script(...Array.from({ length: (SESSIONS + 1) * 4 }, () => reply));
  const api = await startApi('benchdocker', { ...BENCH_FAIR_USE_ENV, MANGO_DB_POOL_SIZE: '20' });
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const key = (await api.issueKey('wrkspc_default')).api_key;
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Json) : {};
  };
  let orchestrator: AppProcess | undefined;
  let supervisor: AppProcess | undefined;
  let env = '';
  try {
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `bench-docker-${Date.now()}`,
      modelUrl: model.url,
      modelKey: 'sk-bench',
      timeoutMs: 180_000,
    });
    env = (await call('POST', '/v1/environments', { name: 'bench-docker' })).id as string;
    supervisor = await startApp(
      'apps/supervisor/src/main.ts',
      {
        MANGO_ENVIRONMENT_KEY: (await api.issueKey('wrkspc_default', env)).api_key,
        MANGO_ENVIRONMENT_ID: env,
        MANGO_BASE_URL: api.url,
        DOCKER_HOST: process.env.DOCKER_HOST!,
        MANGO_WORKER_IMAGE: process.env.MANGO_BASE_IMAGE!,
        MANGO_WORKER_SOURCE_DIR: ROOT,
        MANGO_SUPERVISOR_ID: SUPERVISOR_ID,
        MANGO_MAX_CONCURRENT_ITEMS: String(CONCURRENCY),
        MANGO_SESSION_IDLE_MS: String(IDLE_MS),
        // info: readiness is the 'docker engine connected' line.
        MANGO_LOG_LEVEL: 'info',
      },
      logged('docker engine connected'),
      120_000,
    );
    const agent = (
      await call('POST', '/v1/agents', {
        name: 'bench-docker',
        model: 'claude-sonnet-4-6',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).id as string;
    // Warm-up (not counted): the item runner's first container, page cache, the workflow bundle.
    await burst(1, agent, supervisor.child.pid!, { print: false, deadlineMs: 180_000 });
    await burst(SESSIONS, agent, supervisor.child.pid!);
  } finally {
    await supervisor?.stop();
    await orchestrator?.stop();
    // Session workspace volumes outlive activations by design; the bench removes the ones it made.
    const { Volumes } = await docker.listVolumes({
      filters: { label: [`dev.mango.supervisor=${SUPERVISOR_ID}`] },
    });
    for (const v of Volumes ?? [])
      await docker
        .getVolume(v.Name)
        .remove({ force: true })
        .catch(() => undefined);
    await api.close();
    await model.close();
  }

  async function burst(
    n: number,
    agent: string,
    supervisorPid: number,
    options: { print?: boolean; deadlineMs?: number } = {},
  ) {
    const ids = await pool(
      Array.from({ length: n }, (_, i) => i),
      20,
      async () => (await call('POST', '/v1/sessions', { agent, environment_id: env })).id as string,
    );
    const before = memory(supervisorPid);
    let peakRss = before.rss;
    let peakContainers = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, memory(supervisorPid).rss);
        const running = await docker
          .listContainers({ filters: { label: [WORK_LABEL], status: ['running'] } })
          .catch(() => []);
        peakContainers = Math.max(peakContainers, running.length);
        await sleep(250);
      }
    })();
    const t0 = Date.now();
    // Every message is issued at t0 (at most 50 requests in flight from this client).
    await pool(ids, 50, (id, i) =>
      call('POST', `/v1/sessions/${id}/events`, {
        events: [{ type: 'user.message', content: [{ type: 'text', text: `run it ${i}` }] }],
      }),
    );
    const admitted = Date.now() - t0;
    const idleAt = new Map<string, { at: number; stop: string }>();
    let errors: Array<{ session_id: string; body: unknown }> = [];
    let results = new Set<string>();
    const deadline = t0 + (options.deadlineMs ?? DEADLINE_MS);
    while (idleAt.size < n && Date.now() < deadline) {
      await sleep(500);
      const rows = await api.sql<{
        session_id: string;
        type: string;
        at: Date;
        stop: string | null;
        body: unknown;
      }>(
        `SELECT session_id, type, created_at AS at, body->'stop_reason'->>'type' AS stop,
                CASE WHEN type = 'session.error' THEN body END AS body
           FROM session_events
          WHERE session_id = ANY($1::text[]) AND type IN ('session.status_idle', 'session.error', 'user.tool_result')`,
        [ids],
      );
      errors = rows.filter((r) => r.type === 'session.error');
      results = new Set(rows.filter((r) => r.type === 'user.tool_result').map((r) => r.session_id));
      for (const r of rows)
        if (r.type === 'session.status_idle' && !idleAt.has(r.session_id))
          idleAt.set(r.session_id, { at: new Date(r.at).getTime(), stop: r.stop ?? '' });
    }
    // The Work items end once their activations Stop (MANGO_SESSION_IDLE_MS after idle).
    let stopped = 0;
    while (Date.now() < deadline) {
      const [row] = await api.sql<{ n: number }>(
        `SELECT count(DISTINCT session_id)::int AS n FROM work_items
          WHERE environment_id = $1 AND state = 'stopped' AND session_id = ANY($2::text[])`,
        [env, ids],
      );
      stopped = row!.n;
      if (stopped >= n) break;
      await sleep(500);
    }
    const drained = Date.now() - t0;
    sampling = false;
    await sampler;
    const after = memory(supervisorPid);
    const latencies = ids.filter((id) => idleAt.has(id)).map((id) => idleAt.get(id)!.at - t0);
    const complete = ids.filter((id) => idleAt.get(id)?.stop === 'end_turn' && results.has(id)).length;
    const last = Math.max(...[...idleAt.values()].map((v) => v.at));
    if (options.print === false && complete === n) return;
    console.log(
      `${options.print === false ? 'warm-up: ' : ''}${n} Sessions, one tool turn each (bash \`echo hi\`, then end_turn), all sent at once to one supervisor`,
    );
    console.log(
      `  complete (idle end_turn with the tool result) ${complete}/${n}   other idle ${idleAt.size - complete}   never idle ${n - idleAt.size}   session.error ${errors.length}   (target: all, 0 errors)`,
    );
    if (complete < n) {
      // Why not: the supervisor's last warnings and errors (pino JSON lines, level ≥ 40) and item lines.
      const lines = supervisor!
        .logs()
        .split('\n')
        .filter((l) => /"level":(4|5|6)\d/.test(l) || l.includes('"msg":"item '));
      for (const l of lines.slice(-5)) console.log(`    supervisor: ${l.slice(0, 600)}`);
    }
    for (const e of errors.slice(0, 3))
      console.log(`    session.error ${e.session_id}: ${JSON.stringify(e.body)}`);
    console.log(
      `  message → idle p50 ${ms(pct(latencies, 50))}   p99 ${ms(pct(latencies, 99))}   last idle ${ms(last - t0)}   all ${n} messages admitted in ${ms(admitted)}   all Work stopped ${stopped}/${n} after ${ms(drained)}`,
    );
    console.log(
      `  supervisor: MANGO_MAX_CONCURRENT_ITEMS ${CONCURRENCY} (its maximum is 64; the rest queue as Work)   most Mango containers running at once ${peakContainers}   MANGO_SESSION_IDLE_MS ${IDLE_MS}`,
    );
    console.log(
      `  supervisor RSS: before ${mib(before.rss)}   peak ${mib(Math.max(peakRss, after.rss))} (sampled)   VmHWM ${mib(after.hwm)}   after ${mib(after.rss)}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
