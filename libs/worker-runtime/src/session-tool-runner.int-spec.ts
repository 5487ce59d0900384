import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWorkSecret, MangoClient } from '@mango/sdk';
import {
  ApiUnderTest,
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  ScriptedModelServer,
  startApi,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';
import { SessionToolRunner } from './session-tool-runner';
import { createToolset } from './tools/toolset';

/**
 * A network-fault proxy in front of the real API: it can swallow one response after the API processed
 * the request (a lost response) and cut one SSE stream mid-way. Everything else passes through.
 */
class FaultProxy {
  server!: Server;
  url!: string;
  readonly seen: Array<{ method: string; path: string; lastEventId?: string }> = [];
  loseNextEventPost = false;
  private streams: ServerResponse[] = [];

  constructor(private readonly target: string) {}

  async start() {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.server = createServer((req, res) => this.forward(req, res)).listen(port, '127.0.0.1');
  }

  cutStreams() {
    for (const s of this.streams) s.destroy();
    this.streams = [];
  }

  private forward(req: IncomingMessage, res: ServerResponse) {
    const path = req.url!;
    this.seen.push({
      method: req.method!,
      path,
      lastEventId: req.headers['last-event-id'] as string | undefined,
    });
    const lose = req.method === 'POST' && /\/events$/.test(path) && this.loseNextEventPost;
    if (lose) this.loseNextEventPost = false;
    const upstream = request(`${this.target}${path}`, { method: req.method, headers: req.headers }, (up) => {
      if (lose) {
        up.resume();
        up.on('end', () => res.socket?.destroy()); // processed upstream, answer lost
        return;
      }
      res.writeHead(up.statusCode!, up.headers);
      if (path.endsWith('/events/stream')) this.streams.push(res);
      up.pipe(res);
    });
    req.pipe(upstream);
    upstream.on('error', () => res.destroy());
  }
}

describe('SessionToolRunner against the real API (scripted model, network faults)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let orchestrator: AppProcess;
  let ws: HttpClient;
  let dir: string;

  beforeAll(async () => {
    api = await startApi('runner');
    model = await startScriptedModel();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `runner-${Date.now()}`,
      modelUrl: model.url,
    });
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    dir = mkdtempSync(join(tmpdir(), 'runner-'));
  }, 180_000);

  afterAll(async () => {
    await orchestrator?.stop();
    await model?.close();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A Session of `agent` with one message, its Work polled and acked by `supervisor`, and a client with
   * the Work token (through `baseUrl`) that has sent the first heartbeat: what an item runner starts with.
   */
  async function activated(supervisor: HttpClient, envId: string, agent: string, baseUrl: string) {
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      })
    ).body;
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const token = decodeWorkSecret(polled.body.secret).sessions_token;
    const client = new MangoClient({ baseUrl, apiKey: token, maxRetries: 0 });
    await client.environments.work.heartbeat(envId, polled.body.id, {
      expected_last_heartbeat: 'NO_HEARTBEAT',
      desired_ttl_seconds: 120,
    });
    return { s, client };
  }

  it('a lost result response is retried (the server answers the stored event) and a cut stream resumes with Last-Event-ID', async () => {
    const envId = (await ws.post('/v1/environments', { name: 'runner-pool' })).body.id;
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const proxy = new FaultProxy(api.url);
    await proxy.start();
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_r1', name: 'bash', input: { command: 'echo one' } }],
        stop_reason: 'tool_use',
      },
      () => {
        proxy.cutStreams(); // the runner is following the stream: cut it once
        return {
          content: [{ type: 'tool_use', id: 'toolu_r2', name: 'bash', input: { command: 'echo two' } }],
          stop_reason: 'tool_use',
        };
      },
      { content: [{ type: 'text', text: 'both ran' }] },
    );
    const agent = (
      await ws.post('/v1/agents', { name: 'r', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
    ).body.id;
    const { s, client } = await activated(supervisor, envId, agent, proxy.url);

    proxy.loseNextEventPost = true;
    const tools = createToolset({ workdir: dir, env: { PATH: process.env.PATH } });
    const lines: Array<[string, unknown]> = [];
    const log = {
      info: (o: { session_id?: unknown }, msg: string) => lines.push([msg, o.session_id]),
      warn: () => undefined,
      error: () => undefined,
    };
    const runner = new SessionToolRunner({
      client,
      sessionId: s.id,
      tools,
      signal: new AbortController().signal,
      log,
      maxIdleMs: 1000,
      idleReportEveryMs: 300,
    });
    try {
      expect(await runner.run()).toBe('idle');
      // The supervisor learns when the idle countdown started (idle-activations.ts), after the turn, and
      // again every idleReportEveryMs while it lasts (a supervisor that adopts the container learns it then).
      const reports = lines.filter(([m]) => m.startsWith('session activation '));
      expect(reports.length).toBeGreaterThanOrEqual(3);
      expect(new Set(reports.map(([m, id]) => `${m} ${id}`))).toEqual(
        new Set([`session activation idle ${s.id}`]),
      );
    } finally {
      await Promise.all(tools.map((t) => t.close?.()));
      proxy.server.closeAllConnections();
      proxy.server.close();
    }

    const events = (await ws.get(`/v1/sessions/${s.id}/events?limit=1000`)).body.data as any[];
    const uses = events.filter((e) => e.type === 'agent.tool_use').map((e) => e.id);
    const results = events.filter((e) => e.type === 'user.tool_result');
    expect(results.map((e) => [e.tool_use_id, e.content[0].text])).toEqual([
      [uses[0], 'one'],
      [uses[1], 'two'],
    ]);
    expect(runner.posted).toEqual(uses);
    // The first result was sent twice (its answer lost), the second once.
    expect(proxy.seen.filter((r) => r.method === 'POST' && r.path.endsWith('/events'))).toHaveLength(3);
    // The stream was opened from the start, then resumed after the cut from the last sequence it saw.
    const streams = proxy.seen.filter((r) => r.path.endsWith('/events/stream'));
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams[0]!.lastEventId).toBeUndefined();
    expect(streams[1]!.lastEventId).toMatch(/^\d+$/);
    expect(model.requests.at(-1)!.body.messages.at(-1).content[0].content[0].text).toBe('two');
  }, 120_000);
  it("a delegate's call the runner first sees after its coordinator's turn ended still runs: a Thread's idle closes only its own calls", async () => {
    const envId = (await ws.post('/v1/environments', { name: 'runner-threads' })).body.id;
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    // One reply function for every request, in whatever order the Threads make them.
    const reply = (body: any) => {
      const last = body.messages.at(-1);
      const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
      const result = blocks.find((b: any) => b.type === 'tool_result');
      if (body.system === 'You coordinate.') {
        // Its turn ends a little later, after the delegate's call (checked below).
        if (result) return { content: [{ type: 'text', text: 'Sent.' }], delayMs: 3000 };
        if (JSON.stringify(last).includes('<message from='))
          return { content: [{ type: 'text', text: 'Done' }] };
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_lead',
              name: 'send_to_agent',
              input: { agent: 'researcher', message: 'note it' },
            },
          ],
          stop_reason: 'tool_use',
        };
      }
      if (result) return { content: [{ type: 'text', text: 'noted' }] };
      return {
        content: [{ type: 'tool_use', id: 'toolu_res', name: 'bash', input: { command: 'echo noted' } }],
        stop_reason: 'tool_use',
      };
    };
    model.script(...Array.from({ length: 6 }, () => reply));
    const researcher = (
      await ws.post('/v1/agents', {
        name: 'researcher',
        model: 'm',
        system: 'You research.',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).body.id;
    const lead = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: 'm',
        system: 'You coordinate.',
        multiagent: { type: 'coordinator', agents: [researcher] },
      })
    ).body.id;
    const { s, client } = await activated(supervisor, envId, lead, api.url);
    // The runner starts late (a slow container start): the delegate's call is in the log, followed by the
    // coordinator's finished turn.
    const whole = async () => {
      const out: any[] = [];
      for await (const e of client.sessions.events.list(s.id, { limit: 1000 })) out.push(e);
      return out;
    };
    let log: any[] = [];
    for (let i = 0; i < 300; i++) {
      log = await whole();
      const call = log.findIndex((e) => e.type === 'agent.tool_use' && e.name === 'bash');
      const idle = log.findIndex((e) => e.type === 'session.status_idle');
      if (call >= 0 && idle > call) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const call = log.find((e) => e.type === 'agent.tool_use' && e.name === 'bash');
    expect(call?.session_thread_id).toMatch(/^sthr_/);
    expect(log.findIndex((e) => e.type === 'session.status_idle')).toBeGreaterThan(log.indexOf(call));

    const tools = createToolset({ workdir: dir, env: { PATH: process.env.PATH } });
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const runner = new SessionToolRunner({
      client,
      sessionId: s.id,
      tools,
      // Bounded: a runner that dropped the call would wait for it forever.
      signal: AbortSignal.timeout(30_000),
      log: quiet,
      maxIdleMs: 500,
    });
    try {
      expect(await runner.run()).toBe('idle');
    } finally {
      await Promise.all(tools.map((t) => t.close?.()));
    }
    expect(runner.posted).toEqual([call.id]);
    const after = await whole();
    const result = after.find((e) => e.type === 'user.tool_result');
    expect([result?.tool_use_id, result?.session_thread_id, result?.content[0].text]).toEqual([
      call.id,
      call.session_thread_id,
      'noted',
    ]);
    // The coordinator heard back and answered.
    expect(
      after.filter((e) => e.type === 'agent.message' && !e.session_thread_id).map((e) => e.content[0].text),
    ).toEqual(['Sent.', 'Done']);
  }, 120_000);
});
