import { decodeWorkSecret } from '@mango/feature-work';
import { Client, Connection } from '@temporalio/client';
import { sessionWorkflow } from '@mango/workflows';
import { recordHistory, startOrchestrator } from './support';
import {
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  startApi,
  ApiUnderTest,
  startScriptedModel,
  ScriptedModelServer,
} from '@mango/testing';

type Ev = { id: string; type: string; seq?: number; [k: string]: any };

/**
 * The Session workflow rebuilt from the Session log (docs/adr/0016-session-workflow-rebuilt-from-the-log.md)
 * over real processes (API, orchestrator, Temporal, PostgreSQL, the scripted model, a raw-HTTP worker):
 * the workflow is terminated mid-turn — what a Temporal restart without its state does to it — and the
 * turn still finishes, every event once, with no new user input: through the relay's signal-with-start
 * when the worker's result arrives, and through the Session sweeper when nothing arrives at all.
 */
describe('Session recovery: a lost workflow resumes its turn from the log (real processes)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess | undefined;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let connection: Connection;
  let temporal: Client;
  const taskQueue = `recovery-${Date.now()}`;

  beforeAll(async () => {
    api = await startApi('recovery');
    model = await startScriptedModel();
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    temporal = new Client({ connection });
  }, 120_000);

  // Each test starts its own orchestrator (the second with the sweeper on): stopped even when the test failed.
  afterEach(async () => {
    await orchestrator?.stop();
    orchestrator = undefined;
  });

  afterAll(async () => {
    await connection?.close();
    await model?.close();
    await api?.close();
  });

  async function events(sessionId: string): Promise<Ev[]> {
    return (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data;
  }

  async function until(sessionId: string, predicate: (e: Ev[]) => boolean, ms = 60_000): Promise<Ev[]> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const list = await events(sessionId);
      if (predicate(list)) return list;
      await new Promise((r) => setTimeout(r, 200));
    }
    return events(sessionId);
  }

  /** A Session with a bash-calling agent, claimed by a raw-HTTP worker; resolves once the tool call is in the log. */
  async function sessionWaitingOnTool(label: string) {
    const envId = (await ws.post('/v1/environments', { name: `pool-${label}` })).body.id;
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const agent = (
      await ws.post('/v1/agents', { name: label, model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
    ).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run the slow tool' }] }],
      })
    ).body;
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    const withUse = await until(s.id, (list) => list.some((e) => e.type === 'agent.tool_use'));
    const use = withUse.find((e) => e.type === 'agent.tool_use')!;
    expect(use).toMatchObject({ name: 'bash', evaluated_permission: 'allow' });
    const answer = () =>
      worker.post(`/v1/sessions/${s.id}/events`, {
        events: [
          { type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'slow done' }] },
        ],
      });
    return { sessionId: s.id as string, answer };
  }

  /** What Temporal does to a workflow whose state it lost: it is gone. Terminated is the closest we can get on a shared server. */
  async function loseWorkflow(sessionId: string) {
    await temporal.workflow.getHandle(sessionId).terminate('test: the workflow state is lost');
    expect((await temporal.workflow.getHandle(sessionId).describe()).status.name).toBe('TERMINATED');
  }

  function expectGaplessOnce(list: Ev[]) {
    // Every event once: distinct ids, and the API's sequence is gapless from 1.
    expect(new Set(list.map((e) => e.id)).size).toBe(list.length);
  }

  const TOOL_TURN = [
    'user.message',
    'session.status_running',
    'span.model_request_start',
    'agent.tool_use',
    'span.model_request_end',
    'user.tool_result',
    'span.model_request_start',
    'agent.message',
    'span.model_request_end',
    'session.status_idle',
  ];

  it('workflow lost while the tool runs: the result’s signal-with-start resumes the turn from the log, every event once', async () => {
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue,
      modelUrl: model.url,
      // No in-activity wait for the result (ADR 0019): the lost run's activity returns at once, so the
      // result arrives with no attempt of this turn alive — the case this test is about. With the wait on,
      // that activity may still be waiting and run the next step itself; an attempt of the new run then
      // waits for its reply (step-flights.int-spec.ts), or asks again if a heartbeat cancelled it first.
      env: { MANGO_SESSION_SWEEP_SECONDS: '0', MANGO_TOOL_RESULT_WAIT_MS: '0' },
    });
    model.script(
      {
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'sleep 5; echo done' } },
        ],
        stop_reason: 'tool_use',
      },
      (body) => ({
        content: [{ type: 'text', text: `after: ${body.messages.at(-1).content[0].content[0].text}` }],
      }),
    );
    const before = model.requests.length;
    const { sessionId, answer } = await sessionWaitingOnTool('lost-mid-tool');
    await loseWorkflow(sessionId);
    // The tool finishes while no workflow exists; its result is the only thing that ever arrives.
    expect((await answer()).status).toBe(200);
    const done = await until(sessionId, (list) => list.some((e) => e.type === 'session.status_idle'));
    expect(done.map((e) => e.type)).toEqual(TOOL_TURN);
    expectGaplessOnce(done);
    expect(done.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('after: slow done');
    // The model was asked twice: the recorded step 0 was read back, not asked again.
    expect(model.requests.length - before).toBe(2);
    expect((await ws.get(`/v1/sessions/${sessionId}`)).body.status).toBe('idle');
    // A new run of the same workflow id: the first command is the start-from-log read.
    const history = await temporal.workflow.getHandle(sessionId).fetchHistory();
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes);
    expect(markers.length).toBeGreaterThan(0);
    await recordHistory(sessionId, 'session-start-from-log');

    // Idempotent: losing it again and starting it twice on an idle Session records nothing.
    await loseWorkflow(sessionId);
    for (let i = 0; i < 2; i++)
      await temporal.workflow.start(sessionWorkflow, {
        workflowId: sessionId,
        taskQueue,
        args: [{ sessionId }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await events(sessionId)).map((e) => e.type)).toEqual(TOOL_TURN);
    expect((await temporal.workflow.getHandle(sessionId).describe()).status.name).toBe('RUNNING');
    // ... and the restarted workflow still takes the next message as turn 2.
    model.script({ content: [{ type: 'text', text: 'second turn' }] });
    await ws.post(`/v1/sessions/${sessionId}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }],
    });
    const next = await until(
      sessionId,
      (list) => list.filter((e) => e.type === 'session.status_idle').length === 2,
    );
    expect(next.slice(TOOL_TURN.length).map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expectGaplessOnce(next);
  }, 240_000);

  it('workflow lost after the result was delivered (nothing will signal): the sweeper restarts it and the turn finishes', async () => {
    const metricsPort = await freePort();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue,
      modelUrl: model.url,
      env: { MANGO_SESSION_SWEEP_SECONDS: '1', MANGO_METRICS_PORT: String(metricsPort) },
    });
    expect(orchestrator.logs()).toContain('session sweeper running');
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'echo hi' } }],
        stop_reason: 'tool_use',
      },
      // The second request is slow: the workflow is lost while it is in flight.
      { content: [{ type: 'text', text: 'finished' }], delayMs: 4000 },
      { content: [{ type: 'text', text: 'finished' }] },
    );
    const { sessionId, answer } = await sessionWaitingOnTool('lost-after-result');
    expect((await answer()).status).toBe(200);
    await until(sessionId, (list) => list.filter((e) => e.type === 'span.model_request_start').length === 2);
    await loseWorkflow(sessionId);
    const lostAt = Date.now();
    const done = await until(sessionId, (list) => list.some((e) => e.type === 'session.status_idle'), 90_000);
    expect(done.filter((e) => e.type === 'session.status_idle')).toHaveLength(1);
    expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(done.filter((e) => e.type === 'agent.message')).toHaveLength(1);
    expect(done.filter((e) => e.type === 'agent.tool_use')).toHaveLength(1);
    expect(done.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    expect(done.filter((e) => e.type === 'session.status_running')).toHaveLength(1);
    expectGaplessOnce(done);
    // Within the sweeper's grace (5 s) + its interval + a turn.
    expect(Date.now() - lostAt).toBeLessThan(60_000);
    expect(orchestrator.logs()).toContain('session sweeper restarted a workflow');
    const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(scrape).toMatch(
      /mango_session_sweeper_restarts_total\{reason="terminated",service="orchestrator"\} 1\b/,
    );
    expect((await temporal.workflow.getHandle(sessionId).describe()).status.name).toBe('RUNNING');
    await recordHistory(sessionId, 'session-sweeper-restart');
  }, 240_000);
});
