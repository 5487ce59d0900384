/**
 * Benchmark: Sessions. Prints, against real processes (apps/api, apps/orchestrator on Temporal, PostgreSQL,
 * the scripted Messages API answering instantly):
 *   - event append latency (POST /v1/sessions/{id}/events, one user.interrupt per request) p50/p99, and
 *     its floor in the same run: the same transaction over a bare pg client, and behind a bare node:http
 *     server (append-floor.ts, bare-append.ts), measured before the orchestrator starts;
 *   - one event fanned out to 1,000 SSE subscribers of one Session: append → each subscriber's frame p50/p99;
 *   - control-plane overhead per self-hosted tool round trip: a raw-HTTP worker on the Session stream
 *     answers every agent.tool_use at once; the interval between consecutive tool calls is the loop's
 *     overhead (API admission, outbox relay, Temporal signal and activities, model call, append, SSE).
 * Printed figures only; never pass/fail. Run: npm run bench:sessions.
 */
import { readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import {
  answers,
  type AppProcess,
  freePort,
  INSPECTOR_NODE_OPTIONS,
  startApi,
  startApp,
  startCpuProfile,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';
import { pct } from '../stats';
import { appendInterrupt } from './append-floor';
import { postgresCpuMs, temporalCpuMs } from './service-cpu';
import { BENCH_FAIR_USE_ENV } from '../fair-use-env';

const APPENDS = Number(process.env.BENCH_APPENDS ?? 500);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const FANOUT_ROUNDS = Number(process.env.BENCH_FANOUT_ROUNDS ?? 5);
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 400);
/**
 * Tool calls per turn: a turn is at most 50 model steps (the Session workflow's STEPS_PER_TURN), so the
 * round trips are spread over turns of at most 49 calls (the 50th step ends the turn with text).
 */
const CALLS_PER_TURN = 49;
/** A directory: the API's CPU profile of the append and of the fan-out phase is written there. */
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const figures = (xs: number[]) =>
  `p50 ${fmt(pct(xs, 50))}   p90 ${fmt(pct(xs, 90))}   p99 ${fmt(pct(xs, 99))}   max ${fmt(Math.max(...xs))}`;

/** CPU time (user + system) a process has used so far, ms (Linux /proc; NaN elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

type Json = Record<string, any>;

/** Splits an SSE byte stream into frames, calling `onFrame` for each (pings skipped). */
function frameParser(onFrame: (event: string, data: Json) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let idx: number;
    while ((idx = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, idx);
      buffer = buffer.slice(idx + 2);
      let event = '';
      let data = '';
      for (const line of raw.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (event && event !== 'ping') onFrame(event, JSON.parse(data));
    }
  };
}

/**
 * One SSE subscriber over node:http (no WHATWG stream per chunk): a thousand of them in this one process
 * cost the client little, so the fan-out figure is the server's, not this process's stream machinery.
 */
function subscribe(
  url: string,
  key: string,
  onFrame: (event: string, data: Json) => void,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', frameParser(onFrame));
      res.on('error', () => undefined);
      resolve(res);
    });
    req.on('error', reject);
  });
}

/** Reads SSE frames from one fetch response, calling `onFrame` for each (pings skipped). */
async function consume(res: Response, onFrame: (event: string, data: Json) => void): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parse = frameParser(onFrame);
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    parse(decoder.decode(value, { stream: true }));
  }
}

/**
 * Opens SUBSCRIBERS SSE streams on `streamUrl`, then FANOUT_ROUNDS times sends one event (`send` returns
 * its id) and times, from just before the send, each subscriber's receipt of its frame. `around` wraps the
 * rounds (a CPU profile). The streams are closed at the end.
 */
async function measureFanout(
  streamUrl: string,
  key: string,
  around: (run: () => Promise<void>) => Promise<void>,
  send: () => Promise<string>,
): Promise<{ fan: number[]; lastArrival: number[]; opened: number }> {
  const arrivals = new Map<string, number[]>();
  const subscribers: IncomingMessage[] = [];
  // Opened 50 at a time (a thousand simultaneous connects overflow the listen backlog).
  for (let i = 0; i < SUBSCRIBERS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, SUBSCRIBERS - i) }, async () => {
        const res = await subscribe(streamUrl, key, (_event, data) => {
          const at = performance.now();
          const list = arrivals.get(data.id) ?? [];
          list.push(at);
          arrivals.set(data.id, list);
        });
        subscribers.push(res);
      }),
    );
  await new Promise((r) => setTimeout(r, 500));
  const fan: number[] = [];
  const lastArrival: number[] = [];
  try {
    await around(async () => {
      for (let round = 0; round < FANOUT_ROUNDS; round++) {
        const t0 = performance.now();
        const id = await send();
        const deadline = Date.now() + 30_000;
        while ((arrivals.get(id)?.length ?? 0) < SUBSCRIBERS && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 5));
        const got = (arrivals.get(id) ?? []).map((at) => at - t0);
        fan.push(...got);
        lastArrival.push(Math.max(...got));
        if (got.length < SUBSCRIBERS)
          console.log(`  round ${round}: only ${got.length} of ${SUBSCRIBERS} received`);
      }
    });
  } finally {
    for (const res of subscribers) res.destroy();
  }
  return { fan, lastArrival, opened: subscribers.length };
}

/**
 * The append's floor: APPENDS sequential appends of one user.interrupt with the floor transaction
 * (append-floor.ts), first on a bare pg client in this process, then through a bare node:http server in
 * its own process (bare-append.ts) called with the same fetch as Mango's API. Each on a fresh Session
 * (`newSession`), so both start from the same log length as Mango's.
 */
async function measureAppendFloor(
  dbUrl: string,
  key: string,
  newSession: () => Promise<string>,
): Promise<{ pg: number[]; http: number[]; serverCpu: number; postgresCpu: number; sessions: string[] }> {
  const workspace = 'wrkspc_default';
  const direct = await newSession();
  const pg: number[] = [];
  const client = new PgClient({ connectionString: dbUrl, application_name: 'mango-bench-floor' });
  await client.connect();
  const pgCpu = postgresCpuMs();
  try {
    for (let i = 0; i < APPENDS; i++) {
      const t0 = performance.now();
      await appendInterrupt(client, direct, workspace);
      pg.push(performance.now() - t0);
    }
  } finally {
    await client.end();
  }
  const postgresCpu = (postgresCpuMs() - pgCpu) / APPENDS;
  const viaHttp = await newSession();
  const port = await freePort();
  const server = await startApp(
    'tools/bench/sessions/bare-append.ts',
    { BENCH_APPEND_PORT: String(port), BENCH_APPEND_DATABASE_URL: dbUrl },
    answers(`http://127.0.0.1:${port}/healthz`),
  );
  const http: number[] = [];
  const serverCpu = cpuMs(server.child.pid);
  try {
    const url = `http://127.0.0.1:${port}/append?session=${viaHttp}&workspace=${workspace}`;
    for (let i = 0; i < APPENDS; i++) {
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events: [{ type: 'user.interrupt' }] }),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`floor append → ${res.status} ${text}`);
      JSON.parse(text);
      http.push(performance.now() - t0);
    }
    return {
      pg,
      http,
      serverCpu: (cpuMs(server.child.pid) - serverCpu) / APPENDS,
      postgresCpu,
      sessions: [direct, viaHttp],
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const model = await startScriptedModel();
  const api = await startApi('benchsessions', {
    ...BENCH_FAIR_USE_ENV,
    MANGO_DB_POOL_SIZE: '20',
    ...(CPU_PROFILE ? { NODE_OPTIONS: INSPECTOR_NODE_OPTIONS } : {}),
  });
  const profile = async <T>(phase: string, fn: () => Promise<T>): Promise<T> => {
    if (!CPU_PROFILE) return fn();
    const profiling = await startCpuProfile(api.app.logs());
    try {
      return await fn();
    } finally {
      const path = join(CPU_PROFILE, `api-${phase}.cpuprofile`);
      await profiling.stop(path);
      console.log(`  (API CPU profile: ${path})`);
    }
  };
  const controllers: AbortController[] = [];
  let started: AppProcess | undefined;
  try {
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const call = async (method: string, path: string, body?: unknown, auth = key): Promise<Json> => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Json) : {};
    };
    const env = (await call('POST', '/v1/environments', { name: 'bench' })).id as string;
    const envKey = (await api.issueKey('wrkspc_default', env)).api_key;
    // A model-less agent for the append and fan-out parts: no orchestrator turn competes for the CPU.
    const quiet = (await call('POST', '/v1/agents', { name: 'quiet', model: 'claude-sonnet-4-6' })).id;

    // ── Append floor (before the orchestrator starts: no relay, no Temporal work competes) ──────────────
    const floor = await measureAppendFloor(api.db.url, key, async () => {
      return (await call('POST', '/v1/sessions', { agent: quiet, environment_id: env })).id as string;
    });
    // The floor's outbox rows are never relayed: its Session has no workflow, and this run's numbers are
    // about the append alone.
    await api.sql('DELETE FROM outbox WHERE session_id = ANY($1)', [floor.sessions]);

    const orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `bench-${Date.now()}`,
      modelUrl: model.url,
      modelKey: 'sk-bench',
      // e.g. BENCH_ORCHESTRATOR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the orchestrator
      // (its main thread and the workflow thread, one file each, written when it stops).
      nodeArgs: process.env.BENCH_ORCHESTRATOR_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
    });
    started = orchestrator;

    // ── Append latency ─────────────────────────────────────────────────────────────────────────────
    // Interrupts are appended (not runnable): the orchestrator runs no turn, so this measures admission
    // and the append transaction (gapless sequence, projection, outbox, NOTIFY) over HTTP — while the
    // outbox relay signals each interrupt to the Session's workflow (orchestrator and Temporal CPU).
    const s1 = (await call('POST', '/v1/sessions', { agent: quiet, environment_id: env })).id;
    const append: number[] = [];
    const appendCpu = cpuMs(api.app.child.pid);
    const appendOrchestratorCpu = cpuMs(orchestrator.child.pid);
    const appendTemporalCpu = temporalCpuMs();
    const appendPostgresCpu = postgresCpuMs();
    await profile('append', async () => {
      for (let i = 0; i < APPENDS; i++) {
        const t0 = performance.now();
        await call('POST', `/v1/sessions/${s1}/events`, { events: [{ type: 'user.interrupt' }] });
        append.push(performance.now() - t0);
      }
    });
    console.log(`event append (HTTP, ${APPENDS} sequential requests)`);
    console.log(
      `  p50 ${fmt(pct(append, 50))}   p90 ${fmt(pct(append, 90))}   p99 ${fmt(pct(append, 99))}   max ${fmt(Math.max(...append))}   (target p99 ≤ 15 ms)`,
    );
    // The API's own CPU per request: steadier than latency on a shared machine.
    console.log(
      `  API CPU per append ${fmt((cpuMs(api.app.child.pid) - appendCpu) / APPENDS)}   orchestrator's (each interrupt is relayed to its workflow) ${fmt((cpuMs(orchestrator.child.pid) - appendOrchestratorCpu) / APPENDS)}`,
    );
    const temporalPerAppend = (temporalCpuMs() - appendTemporalCpu) / APPENDS;
    const postgresPerAppend = (postgresCpuMs() - appendPostgresCpu) / APPENDS;
    if (Number.isFinite(temporalPerAppend) && Number.isFinite(postgresPerAppend))
      console.log(
        `  services' CPU per append: Temporal server ${fmt(temporalPerAppend)}   PostgreSQL ${fmt(postgresPerAppend)} (floor: ${fmt(floor.postgresCpu)})`,
      );
    console.log(
      `  floor (same run, no orchestrator yet): the same transaction on a bare pg client   ${figures(floor.pg)}`,
    );
    console.log(
      `  floor behind a bare node:http server (same request)   ${figures(floor.http)}   server CPU per append ${fmt(floor.serverCpu)}`,
    );
    console.log(
      `  → Mango / floor (bare http): p50 ${(pct(append, 50) / pct(floor.http, 50)).toFixed(2)}   p99 ${(pct(append, 99) / pct(floor.http, 99)).toFixed(2)}`,
    );

    // ── Fan-out to SSE subscribers ─────────────────────────────────────────────────────────────────
    const s2 = (await call('POST', '/v1/sessions', { agent: quiet, environment_id: env })).id;
    // CPU from the first round on (the streams are open by then).
    let fanCpu = 0;
    let benchCpu = process.cpuUsage();
    let fanOrchestratorCpu = 0;
    const { fan, lastArrival, opened } = await measureFanout(
      `${api.url}/v1/sessions/${s2}/events/stream`,
      key,
      (run) => {
        fanCpu = cpuMs(api.app.child.pid);
        benchCpu = process.cpuUsage();
        fanOrchestratorCpu = cpuMs(orchestrator.child.pid);
        return profile('fanout', run);
      },
      async () => {
        const sent = await call('POST', `/v1/sessions/${s2}/events`, {
          events: [{ type: 'user.interrupt' }],
        });
        return sent.data[0].id as string;
      },
    );
    console.log(
      `one event to ${opened} SSE subscribers of one Session (${FANOUT_ROUNDS} rounds, one API process)`,
    );
    console.log(
      `  per subscriber p50 ${fmt(pct(fan, 50))}   p99 ${fmt(pct(fan, 99))}   last subscriber (worst round) ${fmt(Math.max(...lastArrival))}   (target p99 ≤ 100 ms)`,
    );
    const bench = process.cpuUsage(benchCpu);
    console.log(
      `  API CPU per round ${fmt((cpuMs(api.app.child.pid) - fanCpu) / FANOUT_ROUNDS)}   this bench's own (the subscribers') ${fmt((bench.user + bench.system) / 1000 / FANOUT_ROUNDS)}   orchestrator's ${fmt((cpuMs(orchestrator.child.pid) - fanOrchestratorCpu) / FANOUT_ROUNDS)}`,
    );

    if (SUBSCRIBERS > 0 && FANOUT_ROUNDS > 0) {
      // The floor in the same run: the same subscribers on a bare node:http SSE server (bare-fanout.ts).
      const port = await freePort();
      const floorApp = await startApp(
        'tools/bench/sessions/bare-fanout.ts',
        { BENCH_FANOUT_PORT: String(port) },
        answers(`http://127.0.0.1:${port}/healthz`),
      );
      try {
        let round = 0;
        const floor = await measureFanout(
          `http://127.0.0.1:${port}/stream`,
          '',
          (run) => run(),
          async () => {
            const id = `sevt_floor${++round}`;
            const res = await fetch(`http://127.0.0.1:${port}/send?id=${id}`, { method: 'POST' });
            await res.text();
            return id;
          },
        );
        console.log(
          `  floor: the same frame from a bare node:http SSE server to ${floor.opened} subscribers   p50 ${fmt(pct(floor.fan, 50))}   p99 ${fmt(pct(floor.fan, 99))}   → Mango p99 / floor p99 ${(pct(fan, 99) / pct(floor.fan, 99)).toFixed(2)}`,
        );
      } finally {
        await floorApp.stop();
      }
    }

    // ── Self-hosted tool round trips ────────────────────────────────────────────────────────────────
    const coder = (
      await call('POST', '/v1/agents', {
        name: 'coder',
        model: 'claude-sonnet-4-6',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).id;
    let n = 0;
    const turns: number[] = [];
    for (let left = ROUND_TRIPS; left > 0; left -= CALLS_PER_TURN) turns.push(Math.min(left, CALLS_PER_TURN));
    for (const calls of turns)
      model.script(
        ...Array.from({ length: calls }, () => ({
          content: [{ type: 'tool_use', id: `toolu_${++n}`, name: 'bash', input: { command: 'true' } }],
          stop_reason: 'tool_use',
        })),
        { content: [{ type: 'text', text: 'done' }] },
      );
    const s3 = (
      await call('POST', '/v1/sessions', {
        agent: coder,
        environment_id: env,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      })
    ).id;
    const work = await call('GET', `/v1/environments/${env}/work/poll?block_ms=10000`, undefined, envKey);
    await call('POST', `/v1/environments/${env}/work/${work.id}/ack`, undefined, envKey);
    const token = JSON.parse(Buffer.from(work.secret, 'base64url').toString()).sessions_token as string;
    await call(
      'POST',
      `/v1/environments/${env}/work/${work.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
      undefined,
      token,
    );
    const useTimes: number[] = [];
    // The gaps between consecutive tool calls of one turn (a turn's first call follows a user.message).
    const gaps: number[] = [];
    let turn = 0;
    let turnOfLastUse = -1;
    // CPU of the orchestrator and the API from the first tool call to the end of the last turn.
    let cpuAtFirst: number[] = [];
    const cpuNow = () => [cpuMs(orchestrator.child.pid), cpuMs(api.app.child.pid)];
    const controller = new AbortController();
    controllers.push(controller);
    const stream = await fetch(`${api.url}/v1/sessions/${s3}/events/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    const finished = new Promise<void>((resolve) => {
      void consume(stream, (event, data) => {
        if (event === 'agent.tool_use') {
          const now = performance.now();
          if (turnOfLastUse === turn) gaps.push(now - useTimes.at(-1)!);
          useTimes.push(now);
          turnOfLastUse = turn;
          if (useTimes.length === 1) cpuAtFirst = cpuNow();
          void call(
            'POST',
            `/v1/sessions/${s3}/events`,
            {
              events: [
                { type: 'user.tool_result', tool_use_id: data.id, content: [{ type: 'text', text: '' }] },
              ],
            },
            token,
          );
        }
        if (event === 'session.status_idle') {
          if (++turn === turns.length) resolve();
          else
            void call('POST', `/v1/sessions/${s3}/events`, {
              events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }],
            });
        }
      });
    });
    await finished;
    const cpuAtLast = cpuNow();
    console.log(
      `self-hosted tool round trips (${gaps.length}, in ${turns.length} turn(s) of ≤ ${CALLS_PER_TURN} calls; instant model and tool)`,
    );
    console.log(
      `  per round trip p50 ${fmt(pct(gaps, 50))}   p99 ${fmt(pct(gaps, 99))}   (target p50 ≤ 30 ms, p99 ≤ 60 ms)`,
    );
    // Every step sends the whole transcript: the same figures by how long the Session already was.
    for (let from = 0; from < gaps.length; from += 150) {
      const part = gaps.slice(from, from + 150);
      if (part.length < 20 || gaps.length <= 150) break;
      console.log(
        `    round trips ${from + 1}–${from + part.length} of the Session   p50 ${fmt(pct(part, 50))}   p99 ${fmt(pct(part, 99))}`,
      );
    }
    const [orchCpu, apiCpu] = cpuAtLast.map((c, i) => (c - cpuAtFirst[i]!) / gaps.length);
    if (Number.isFinite(orchCpu) && Number.isFinite(apiCpu))
      console.log(
        `  CPU per round trip (10 ms ticks, averaged): orchestrator ${fmt(orchCpu)}   api ${fmt(apiCpu)}`,
      );
    // Where the time goes, from the events' commit timestamps (ms precision).
    const log: Array<{ type: string; processed_at: string }> = [];
    for (let page: string | null = null; ;) {
      const got = await call(
        'GET',
        `/v1/sessions/${s3}/events?limit=1000${page ? `&page=${encodeURIComponent(page)}` : ''}`,
      );
      log.push(...got.data);
      page = got.next_page;
      if (!page) break;
    }
    const at = (e: { processed_at: string }) => Date.parse(e.processed_at);
    const phases: Record<string, number[]> = { 'result → model request': [], 'model request → tool_use': [] };
    for (let i = 0; i < log.length; i++) {
      if (log[i]!.type !== 'user.tool_result') continue;
      const rest = log.slice(i);
      const idle = rest.findIndex((e) => e.type === 'session.status_idle');
      const turnRest = idle < 0 ? rest : rest.slice(0, idle);
      const start = turnRest.find((e) => e.type === 'span.model_request_start');
      const use = turnRest.find((e) => e.type === 'agent.tool_use');
      if (start) phases['result → model request'].push(at(start) - at(log[i]!));
      if (start && use) phases['model request → tool_use'].push(at(use) - at(start));
    }
    // The Temporal part, from the workflow's history (server timestamps): a tool result's signal → the
    // next model-step activity started, and the model step itself (started → completed).
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const history = await new Client({
        connection,
        namespace: process.env.MANGO_TEMPORAL_NAMESPACE ?? 'default',
      }).workflow
        .getHandle(s3)
        .fetchHistory();
      const events = history.events ?? [];
      const when = (e: (typeof events)[number]) => tsToMs(e.eventTime);
      // int64 fields are Long objects.
      const num = (v: unknown) => Number(String(v));
      const signalToStep: number[] = [];
      const step: number[] = [];
      // The outbox relay's part: a tool result's commit time (ms) → its signal in the history.
      const signals = events.filter((e, i) => e.workflowExecutionSignaledEventAttributes && i > 2).map(when);
      phases['tool result → signal (outbox relay)'] = log
        .filter((e) => e.type === 'user.tool_result')
        .flatMap((e) => {
          const sent = signals.find((t) => t >= at(e) - 1);
          return sent === undefined ? [] : [sent - at(e)];
        });
      events.forEach((e, i) => {
        if (e.workflowExecutionSignaledEventAttributes && i > 2) {
          // A step started after the signal (the slow path). Since ADR 0019 a result that came back within
          // the window is taken by the step already running (no signal → step hand-off to measure).
          const started = events.slice(i).find((x) => x.activityTaskStartedEventAttributes);
          if (started && when(started) >= when(e)) signalToStep.push(when(started) - when(e));
        }
        if (e.activityTaskCompletedEventAttributes) {
          const id = num(e.activityTaskCompletedEventAttributes.startedEventId);
          const started = events.find((x) => num(x.eventId) === id);
          if (started) step.push(when(e) - when(started));
        }
      });
      const stepActivities = events.filter((e) => e.activityTaskScheduledEventAttributes).length;
      console.log(
        `  model-step activities: ${stepActivities} for ${useTimes.length} tool calls (ADR 0019: fast results stay in one)`,
      );
      phases['tool result signal → model step started (Temporal)'] = signalToStep;
      phases['model step activity (started → completed)'] = step;
    } finally {
      await connection.close();
    }
    for (const [name, xs] of Object.entries(phases)) {
      if (!xs.length) continue;
      console.log(`    ${name.padEnd(52)} p50 ${fmt(pct(xs, 50))}   p99 ${fmt(pct(xs, 99))}`);
      // The two phases read from the log's commit times, by how long the Session already was.
      if (!name.startsWith('result → model') && !name.startsWith('model request →')) continue;
      for (let from = 0; from + 20 <= xs.length && xs.length > 150; from += 150) {
        const part = xs.slice(from, from + 150);
        console.log(
          `      ${from + 1}–${from + part.length}`.padEnd(56) +
            `p50 ${fmt(pct(part, 50))}   p99 ${fmt(pct(part, 99))}`,
        );
      }
    }
  } finally {
    for (const c of controllers) c.abort();
    await started?.stop();
    await api.close();
    await model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
