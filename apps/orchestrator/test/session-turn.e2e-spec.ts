import { Client, Connection } from '@temporalio/client';
import { startOrchestrator } from './support';
import {
  answers,
  AppProcess,
  freePort,
  scrapeMetrics,
  startApp,
  httpClient,
  HttpClient,
  startApi,
  ApiUnderTest,
  startScriptedModel,
  ScriptedModelServer,
} from '@mango/testing';

/**
 * A text-only turn over real processes: apps/api admits the message (event, projection, Work, outbox in
 * one transaction); apps/orchestrator relays the outbox to Temporal (signal-with-start, workflow id =
 * session id); the Session workflow's activities call the scripted Messages API and append the turn's
 * events exactly once.
 */

const say = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

/** The Session's events once it has gone idle `n` times (fails after a minute). */
async function idles(ws: HttpClient, sessionId: string, n: number) {
  for (let i = 0; i < 600; i++) {
    const list = (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Array<{
      type: string;
      [k: string]: any;
    }>;
    if (list.filter((e) => e.type === 'session.status_idle').length >= n) return list;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${sessionId} did not reach ${n} idles`);
}

describe('a Session turn through the orchestrator (real API, Temporal, PostgreSQL, scripted model)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let agentId: string;
  let envId: string;

  beforeAll(async () => {
    api = await startApi('turn');
    model = await startScriptedModel();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `turn-${Date.now()}`,
      modelUrl: model.url,
    });
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    agentId = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6', system: 'Be brief.' }))
      .body.id;
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  }, 120_000);

  afterAll(async () => {
    await orchestrator?.stop();
    await model?.close();
    await api?.close();
  });

  async function eventsUntilIdle(sessionId: string, idleCount: number) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const events = (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Array<{
        type: string;
        [k: string]: any;
      }>;
      if (events.filter((e) => e.type === 'session.status_idle').length >= idleCount || Date.now() > deadline)
        return events;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('user.message → running → model request → agent.message → idle(end_turn), each event once', async () => {
    model.script({
      content: [{ type: 'text', text: 'Hello from the scripted model.' }],
      usage: { input_tokens: 12, output_tokens: 7 },
    });
    const s = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Hi!' }] }],
      })
    ).body;
    const events = await eventsUntilIdle(s.id, 1);
    expect(events.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(events[3]!.content).toEqual([{ type: 'text', text: 'Hello from the scripted model.' }]);
    expect(events[4]!).toMatchObject({
      model_request_start_id: events[2]!.id,
      is_error: false,
      model_usage: { input_tokens: 12, output_tokens: 7 },
    });
    expect(events[5]!.stop_reason).toEqual({ type: 'end_turn' });
    const session = (await ws.get(`/v1/sessions/${s.id}`)).body;
    expect(session).toMatchObject({ status: 'idle', usage: { input_tokens: 12, output_tokens: 7 } });
    // The turn's wall time is active time; duration is the Session's age.
    const turnMs = Date.parse(events[5]!.processed_at) - Date.parse(events[1]!.processed_at);
    expect(session.usage.active_seconds).toBeCloseTo(turnMs / 1000, 2);
    expect(session.stats.active_seconds).toBe(session.usage.active_seconds);
    expect(session.stats.duration_seconds).toBeGreaterThanOrEqual(0);
    expect(model.requests).toHaveLength(1);
    // The official SDK carries the configured key (this SDK version as a bearer token).
    const { authorization, 'x-api-key': apiKey } = model.requests[0]!.headers;
    expect(apiKey ?? authorization?.replace(/^Bearer /, '')).toBe('sk-scripted-model-key');
    expect(model.requests[0]!.body.stream).toBe(true);
    expect(model.requests[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi!' }] }],
    });
  }, 90_000);

  it('a follow-up message continues the same workflow with the whole transcript', async () => {
    model.script(
      { content: [{ type: 'text', text: 'First answer.' }] },
      { content: [{ type: 'text', text: 'Second answer.' }] },
    );
    const s = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'one' }] }],
      })
    ).body;
    await eventsUntilIdle(s.id, 1);
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'two' }] }],
    });
    const events = await eventsUntilIdle(s.id, 2);
    expect(events.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
      'First answer.',
      'Second answer.',
    ]);
    expect(model.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer.' }] },
      { role: 'user', content: [{ type: 'text', text: 'two' }] },
    ]);
    const undispatched = await api.sql<{ n: string }>(
      'SELECT count(*) AS n FROM outbox WHERE dispatched_at IS NULL',
    );
    expect(Number(undispatched[0]!.n)).toBe(0);
  }, 90_000);
});

describe('orchestrator crash mid-turn (kill -9, real processes)', () => {
  it('a new orchestrator finishes the turn; no event is lost or appended twice', async () => {
    const api = await startApi('turncrash');
    const model = await startScriptedModel();
    const queue = `crash-${Date.now()}`;
    let first: AppProcess | undefined = await startOrchestrator(api.db.url, {
      taskQueue: queue,
      modelUrl: model.url,
    });
    let second: AppProcess | undefined;
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
      const envId = (await ws.post('/v1/environments', { name: 'e' })).body.id;
      // The first model call never answers in time: the orchestrator dies while it waits.
      model.script(
        { content: [{ type: 'text', text: 'lost' }], delayMs: 60_000 },
        { content: [{ type: 'text', text: 'recovered' }] },
      );
      const s = (
        await ws.post('/v1/sessions', {
          agent,
          environment_id: envId,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
        })
      ).body;
      for (let i = 0; i < 300 && model.requests.length === 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(model.requests).toHaveLength(1);
      expect(await first.stop('SIGKILL')).toBeNull();
      first = undefined;
      second = await startOrchestrator(api.db.url, { taskQueue: queue, modelUrl: model.url });
      let events: Array<{ type: string; [k: string]: any }> = [];
      for (let i = 0; i < 600; i++) {
        events = (await ws.get(`/v1/sessions/${s.id}/events?limit=1000`)).body.data;
        if (events.some((e) => e.type === 'session.status_idle')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(events.map((e) => e.type)).toEqual([
        'user.message',
        'session.status_running',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
      expect(events[3]!.content[0].text).toBe('recovered');
    } finally {
      await first?.stop('SIGKILL');
      await second?.stop();
      await model.close();
      await api.close();
    }
  }, 120_000);
});

describe('long Sessions continue as new (real orchestrator, Temporal)', () => {
  it('a run of two turns hands consumed input, turn numbers and input signalled mid-turn to the next run', async () => {
    const api = await startApi('continue');
    const model = await startScriptedModel();
    const orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `continue-${Date.now()}`,
      modelUrl: model.url,
      env: { MANGO_SESSION_TURNS_PER_RUN: '2' },
    });
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const agent = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6' })).body.id;
      const env = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
      model.script(
        { content: [{ type: 'text', text: 'reply 1' }] },
        // Turn 2 is slow: message 3 arrives while it runs, and is consumed only by the next run.
        { content: [{ type: 'text', text: 'reply 2' }], delayMs: 1500 },
        { content: [{ type: 'text', text: 'reply 3' }] },
        { content: [{ type: 'text', text: 'reply 4' }] },
        { content: [{ type: 'text', text: 'reply 5' }] },
      );
      const s = (await ws.post('/v1/sessions', { agent, environment_id: env, initial_events: [say('m1')] }))
        .body;
      await idles(ws, s.id, 1);
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('m2')] });
      for (let i = 0; i < 100; i++) {
        if (model.requests.length >= 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('m3')] });
      await idles(ws, s.id, 3);
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('m4')] });
      await idles(ws, s.id, 4);
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('m5')] });
      const events = await idles(ws, s.id, 5);

      expect(events.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
        'reply 1',
        'reply 2',
        'reply 3',
        'reply 4',
        'reply 5',
      ]);
      expect(events.filter((e) => e.type === 'session.status_running')).toHaveLength(5);
      expect(model.requests).toHaveLength(5);
      expect(model.requests[4]!.body.messages.map((m: { role: string }) => m.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
      ]);
      // Three runs of the one workflow id: turns 1–2, 3–4, 5.
      const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
      try {
        const client = new Client({ connection });
        const runs: string[] = [];
        for await (const run of client.workflow.list({ query: `WorkflowId = '${s.id}'` }))
          runs.push(run.runId);
        expect(runs).toHaveLength(3);
      } finally {
        await connection.close();
      }
    } finally {
      await orchestrator.stop();
      await model.close();
      await api.close();
    }
  }, 120_000);
});

describe('API crash mid-turn (kill -9, real processes)', () => {
  it('the turn completes without the API; a client resuming on a new API with Last-Event-ID sees every event once', async () => {
    const api = await startApi('apicrash');
    const model = await startScriptedModel();
    const orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `apicrash-${Date.now()}`,
      modelUrl: model.url,
    });
    let second: AppProcess | undefined;
    try {
      const key = (await api.issueKey('wrkspc_default')).api_key;
      const ws = httpClient(api.url, key);
      const agent = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6' })).body.id;
      const env = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
      // A slow reply: the API dies while the model request is in flight.
      model.script({ content: [{ type: 'text', text: 'Finished while the API was down.' }], delayMs: 2500 });
      const s = (
        await ws.post('/v1/sessions', {
          agent,
          environment_id: env,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
        })
      ).body;
      const res = await fetch(`${api.url}/v1/sessions/${s.id}/events/stream`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const before: Array<{ id: string; event: string }> = [];
      const reader = res.body!.getReader();
      let buffer = '';
      while (!before.some((f) => f.event === 'span.model_request_start')) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += Buffer.from(value).toString('utf8');
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, at).split('\n');
          buffer = buffer.slice(at + 2);
          const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          if (id && event) before.push({ id, event });
        }
      }
      expect(await api.app.stop('SIGKILL')).toBeNull();
      await reader.cancel().catch(() => undefined);

      // The orchestrator needs only PostgreSQL and Temporal: the turn finishes while no API runs.
      const idle = async () => {
        for (let i = 0; i < 300; i++) {
          const rows = await api.sql<{ n: string }>(
            `SELECT count(*) AS n FROM session_events WHERE session_id = $1 AND type = 'session.status_idle'`,
            [s.id],
          );
          if (Number(rows[0]!.n) >= 1) return;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('the turn did not finish');
      };
      await idle();

      const port = await freePort();
      second = await startApp(
        'apps/api/src/main.ts',
        { MANGO_DATABASE_URL: api.db.url, MANGO_API_PORT: String(port), MANGO_LOG_LEVEL: 'warn' },
        answers(`http://127.0.0.1:${port}/healthz`),
      );
      const resumed = await fetch(`http://127.0.0.1:${port}/v1/sessions/${s.id}/events/stream`, {
        headers: { authorization: `Bearer ${key}`, 'Last-Event-ID': before.at(-1)!.id },
      });
      const after: Array<{ id: string; event: string }> = [];
      const reader2 = resumed.body!.getReader();
      buffer = '';
      while (!after.some((f) => f.event === 'session.status_idle')) {
        const { value, done } = await reader2.read();
        if (done) break;
        buffer += Buffer.from(value).toString('utf8');
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, at).split('\n');
          buffer = buffer.slice(at + 2);
          const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          if (id && event) after.push({ id, event });
        }
      }
      await reader2.cancel();
      const all = [...before, ...after];
      expect(all.map((f) => Number(f.id))).toEqual(all.map((_, i) => i + 1));
      expect(all.map((f) => f.event)).toEqual([
        'user.message',
        'session.status_running',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
    } finally {
      await second?.stop();
      await orchestrator.stop();
      await model.close();
      await api.db.drop();
    }
  }, 120_000);
});

describe('compaction near the model window (real orchestrator, scripted model)', () => {
  it('a large prompt makes the next turn summarize the completed turns first; later requests start from the summary', async () => {
    const api = await startApi('compact');
    const model = await startScriptedModel();
    const metricsPort = await freePort();
    const orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `compact-${Date.now()}`,
      modelUrl: model.url,
      env: { MANGO_COMPACT_AT_TOKENS: '1000', MANGO_METRICS_PORT: String(metricsPort) },
    });
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const agent = (
        await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6', system: 'Be brief.' })
      ).body.id;
      const env = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
      model.script(
        {
          content: [{ type: 'text', text: 'Long answer one.' }],
          usage: { input_tokens: 1200, output_tokens: 50 },
        },
        {
          content: [{ type: 'text', text: 'The user asked about one; the agent answered.' }],
          usage: { input_tokens: 300, output_tokens: 20 },
        },
        { content: [{ type: 'text', text: 'Answer two.' }], usage: { input_tokens: 40, output_tokens: 5 } },
        { content: [{ type: 'text', text: 'Answer three.' }], usage: { input_tokens: 60, output_tokens: 5 } },
      );
      const s = (await ws.post('/v1/sessions', { agent, environment_id: env, initial_events: [say('one')] }))
        .body;
      await idles(ws, s.id, 1);
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('two')] });
      const events = await idles(ws, s.id, 2);
      const second = events.slice(events.findIndex((e) => e.type === 'session.status_idle') + 1);
      expect(second.map((e) => e.type)).toEqual([
        'user.message',
        'session.status_running',
        'agent.thread_context_compacted',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
      // Internal fields (the summary) never leave the server.
      expect(Object.keys(second[2]!).sort()).toEqual(['id', 'processed_at', 'type']);
      // The summarizing request saw the whole first turn; the next request starts from the summary.
      expect(model.requests[1]!.body.system).toMatch(/compact conversations/);
      expect(model.requests[1]!.body.messages.at(-1).content[0].text).toMatch(/Summarize/);
      expect(model.requests[2]!.body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: expect.stringContaining('The user asked about one; the agent answered.') },
            { type: 'text', text: 'two' },
          ],
        },
      ]);
      // The summary's usage is counted; a small prompt does not compact again.
      expect((await ws.get(`/v1/sessions/${s.id}`)).body.usage).toMatchObject({
        input_tokens: 1540,
        output_tokens: 75,
      });
      // …and so is it in the orchestrator's metrics (three requests so far, the summary among them).
      const metrics = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`);
      const labels = { model: 'claude-sonnet-4-6' };
      expect(metrics.value('mango_model_tokens_total', { ...labels, type: 'input' })).toBe(1540);
      expect(metrics.value('mango_model_tokens_total', { ...labels, type: 'output' })).toBe(75);
      expect(metrics.value('mango_model_request_duration_seconds_count', { ...labels, outcome: 'ok' })).toBe(
        3,
      );
      await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('three')] });
      const third = await idles(ws, s.id, 3);
      expect(third.filter((e) => e.type === 'agent.thread_context_compacted')).toHaveLength(1);
      expect(model.requests[3]!.body.messages.map((m: { role: string }) => m.role)).toEqual([
        'user',
        'assistant',
        'user',
      ]);
    } finally {
      await orchestrator.stop();
      await model.close();
      await api.close();
    }
  }, 120_000);
});
