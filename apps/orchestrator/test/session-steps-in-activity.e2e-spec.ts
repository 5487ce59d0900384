import { decodeWorkSecret } from '@mango/feature-work';
import { AppProcess, httpClient, HttpClient, startApi, startScriptedModel } from '@mango/testing';
import {
  recordHistory,
  scheduledActivities,
  SessionEvent,
  SessionStack,
  sessionEvents,
  STACK_TIMEOUT_MS,
  startOrchestrator,
  startSessionStack,
  untilEvents,
} from './support';

/**
 * ADR 0019: a model step whose sandbox tool calls are answered within MANGO_TOOL_RESULT_WAIT_MS runs the
 * next step in the same activity (woken by the outbox relay's notices); past the window the workflow waits
 * for the result's signal as before. Real API, orchestrator, Temporal, scripted model and a raw-HTTP worker.
 * The window here is long (15 s) so that "answered at once" is well inside it on a loaded machine, and the
 * slow path waits for the history to show the activity gave up rather than for a time.
 */
const WAIT_MS = 15_000;

const toolUse = (id: string, command: string) => ({
  content: [{ type: 'tool_use', id, name: 'bash', input: { command } }],
  stop_reason: 'tool_use',
});

/** Claims the Session's Work with the Environment key and answers as its worker (the Work token). */
async function claim(apiUrl: string, supervisor: HttpClient, envId: string, sessionId: string) {
  const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
  expect(polled.body.data).toEqual({ type: 'session', id: sessionId });
  await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
  const worker = httpClient(apiUrl, decodeWorkSecret(polled.body.secret).sessions_token);
  await worker.post(
    `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
  );
  const answer = async (use: SessionEvent) =>
    worker.post(`/v1/sessions/${sessionId}/events`, {
      events: [
        {
          type: 'user.tool_result',
          tool_use_id: use.id,
          content: [{ type: 'text', text: `ran ${use.input.command}` }],
        },
      ],
    });
  return {
    answer,
    stop: () => supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/stop`, { force: true }),
  };
}

/** Answers every agent.tool_use of the Session once, as soon as it is listed, until the turn is idle. */
async function answerEachAtOnce(
  ws: HttpClient,
  sessionId: string,
  answer: (use: SessionEvent) => Promise<unknown>,
  idles = 1,
): Promise<SessionEvent[]> {
  const answered = new Set<string>();
  for (let i = 0; i < 3000; i++) {
    const list = await sessionEvents(ws, sessionId);
    if (list.filter((e) => e.type === 'session.status_idle').length >= idles) return list;
    for (const use of list.filter((e) => e.type === 'agent.tool_use' && !answered.has(e.id))) {
      answered.add(use.id);
      await answer(use);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

/** The turn's events, with each tool call answered once: the shape of n round trips then a reply. */
function roundTrips(n: number): string[] {
  return [
    'user.message',
    'session.status_running',
    ...Array.from({ length: n }, () => [
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'user.tool_result',
    ]).flat(),
    'span.model_request_start',
    'agent.message',
    'span.model_request_end',
    'session.status_idle',
  ];
}

describe('tool round trips inside one model-step activity (ADR 0019)', () => {
  let stack: SessionStack;
  let envId: string;
  let agent: string;

  beforeAll(async () => {
    stack = await startSessionStack('steps', {
      environment: true,
      orchestratorEnv: { MANGO_TOOL_RESULT_WAIT_MS: String(WAIT_MS) },
    });
    envId = stack.environmentId!;
    agent = (
      await stack.ws.post('/v1/agents', {
        name: 'coder',
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).body.id;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  const start = async (text: string) =>
    (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
      })
    ).body.id as string;

  it('results answered at once: every round trip runs in the one activity, each step once', async () => {
    stack.model.script(
      toolUse('toolu_a', 'one'),
      toolUse('toolu_b', 'two'),
      toolUse('toolu_c', 'three'),
      toolUse('toolu_d', 'four'),
      { content: [{ type: 'text', text: 'all four ran' }] },
    );
    const before = stack.model.requests.length;
    const s = await start('run four commands');
    const worker = await claim(stack.api.url, stack.supervisor!, envId, s);
    const list = await answerEachAtOnce(stack.ws, s, worker.answer);
    expect(list.map((e) => e.type)).toEqual(roundTrips(4));
    expect(list.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(list.filter((e) => e.type === 'user.tool_result').map((e) => e.content[0].text)).toEqual([
      'ran one',
      'ran two',
      'ran three',
      'ran four',
    ]);
    // Five model requests for five steps; the last one saw every result.
    expect(stack.model.requests.length - before).toBe(5);
    expect(
      stack.model.requests
        .at(-1)!
        .body.messages.filter((m: { role: string }) => m.role === 'user')
        .slice(1)
        .map((m: { content: Array<{ content: Array<{ text: string }> }> }) => m.content[0]!.content[0]!.text),
    ).toEqual(['ran one', 'ran two', 'ran three', 'ran four']);
    // The fast path: one model-step activity for all five steps (no signal, workflow task or dispatch in
    // between the round trips).
    expect(await scheduledActivities(s)).toEqual([{ type: 'runModelStep', end: 'completed' }]);
    await recordHistory(s, 'session-steps-in-activity');
    await worker.stop();
  }, 180_000);

  it('a result after the window: the activity returns, the workflow waits for the signal as before', async () => {
    stack.model.script(toolUse('toolu_slow', 'slow'), { content: [{ type: 'text', text: 'slow one ran' }] });
    const s = await start('run a slow command');
    const worker = await claim(stack.api.url, stack.supervisor!, envId, s);
    const withUse = await untilEvents(stack.ws, s, (l) => l.some((e) => e.type === 'agent.tool_use'));
    const use = withUse.find((e) => e.type === 'agent.tool_use')!;
    // The tool is slow: it answers only once the step's activity has given up waiting (its window passed).
    let activities: Awaited<ReturnType<typeof scheduledActivities>> = [];
    for (let i = 0; i < 1200; i++) {
      activities = await scheduledActivities(s);
      if (activities[0]?.end) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(activities).toEqual([{ type: 'runModelStep', end: 'completed' }]);
    expect((await worker.answer(use)).status).toBe(200);
    const list = await untilEvents(stack.ws, s, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(list.map((e) => e.type)).toEqual(roundTrips(1));
    expect(list.at(-2)).toMatchObject({ type: 'span.model_request_end' });
    // The result's signal woke the workflow, which scheduled the next step as an activity of its own.
    expect(await scheduledActivities(s)).toEqual([
      { type: 'runModelStep', end: 'completed' },
      { type: 'runModelStep', end: 'completed' },
    ]);
    await recordHistory(s, 'session-steps-in-activity-slow-result');
    await worker.stop();
  }, 180_000);

  it('an interrupt during the in-activity wait cancels it: the turn ends idle(end_turn), the call closed', async () => {
    stack.model.script(toolUse('toolu_int', 'sleep 100'), {
      content: [{ type: 'text', text: 'stopped' }],
    });
    const s = await start('sleep');
    const worker = await claim(stack.api.url, stack.supervisor!, envId, s);
    const withUse = await untilEvents(stack.ws, s, (l) => l.some((e) => e.type === 'agent.tool_use'));
    const use = withUse.find((e) => e.type === 'agent.tool_use')!;
    await stack.ws.post(`/v1/sessions/${s}/events`, { events: [{ type: 'user.interrupt' }] });
    const list = await untilEvents(stack.ws, s, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'user.interrupt',
      'session.status_idle',
    ]);
    expect(list.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    // The call is closed: its late result is refused.
    const late = await worker.answer(use);
    expect(late.status).toBe(409);
    // The interrupt reached the one activity while it waited (the window is far from over): its notice
    // ended the wait (the activity returns and the workflow's interrupt ends the turn) or Temporal's
    // cancellation did (the activity is cancelled) — whichever came first; no second step was scheduled.
    const activities = await scheduledActivities(s);
    expect(activities).toHaveLength(1);
    expect(activities[0]!.type).toBe('runModelStep');
    expect(['completed', 'canceled']).toContain(activities[0]!.end);
    // The model was asked once: nothing of a next step ran.
    expect(stack.model.requests.at(-1)!.body.messages).toHaveLength(1);
    await recordHistory(s, 'session-steps-in-activity-interrupted');
    await worker.stop();
  }, 180_000);
});

describe('an orchestrator killed during a multi-step activity (kill -9, real processes)', () => {
  it('the retried activity takes the recorded steps from the log: nothing asked or appended twice', async () => {
    const api = await startApi('stepscrash');
    const model = await startScriptedModel();
    const queue = `stepscrash-${Date.now()}`;
    const env = { MANGO_TOOL_RESULT_WAIT_MS: String(WAIT_MS) };
    let first: AppProcess | undefined = await startOrchestrator(api.db.url, {
      taskQueue: queue,
      modelUrl: model.url,
      env,
    });
    let second: AppProcess | undefined;
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const envId = (await ws.post('/v1/environments', { name: 'e' })).body.id as string;
      const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
      const agent = (
        await ws.post('/v1/agents', { name: 'a', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
      ).body.id;
      // Steps 0 and 1 run in the activity; step 2's request never answers in time: the orchestrator dies
      // while it waits, after that step's start span is recorded.
      model.script(toolUse('toolu_1', 'one'), toolUse('toolu_2', 'two'), {
        ...toolUse('toolu_lost', 'lost'),
        delayMs: 120_000,
      });
      const s = (
        await ws.post('/v1/sessions', {
          agent,
          environment_id: envId,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
        })
      ).body.id as string;
      const worker = await claim(api.url, supervisor, envId, s);
      const answered = new Set<string>();
      for (let i = 0; i < 1200 && model.requests.length < 3; i++) {
        for (const use of (await sessionEvents(ws, s)).filter(
          (e) => e.type === 'agent.tool_use' && !answered.has(e.id),
        )) {
          answered.add(use.id);
          await worker.answer(use);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(model.requests).toHaveLength(3);
      // All three steps in one activity, still running.
      expect(await scheduledActivities(s)).toEqual([{ type: 'runModelStep' }]);
      expect(await first.stop('SIGKILL')).toBeNull();
      first = undefined;
      model.script(toolUse('toolu_3', 'three'), { content: [{ type: 'text', text: 'recovered' }] });
      second = await startOrchestrator(api.db.url, { taskQueue: queue, modelUrl: model.url, env });
      const list = await answerEachAtOnce(ws, s, worker.answer);
      expect(list.map((e) => e.type)).toEqual(roundTrips(3));
      expect(list.filter((e) => e.type === 'agent.tool_use').map((e) => e.input.command)).toEqual([
        'one',
        'two',
        'three',
      ]);
      expect(list.find((e) => e.type === 'agent.message')!.content[0].text).toBe('recovered');
      // Steps 0 and 1 were taken from the log: the model was asked for step 2 again and step 3, no more.
      expect(model.requests).toHaveLength(5);
      expect(
        model.requests[3]!.body.messages.filter((m: { role: string }) => m.role === 'assistant').length,
      ).toBe(2);
      // Every idempotency key once, the sequence gapless.
      const keys = await api.sql<{ k: string; n: string }>(
        `SELECT idempotency_key AS k, count(*) AS n FROM session_events
          WHERE session_id = $1 AND idempotency_key IS NOT NULL GROUP BY 1 HAVING count(*) > 1`,
        [s],
      );
      expect(keys).toEqual([]);
      const seqs = await api.sql<{ seq: string }>(
        'SELECT seq FROM session_events WHERE session_id = $1 ORDER BY seq',
        [s],
      );
      expect(seqs.map((r) => Number(r.seq))).toEqual(seqs.map((_, i) => i + 1));
      // The one activity, retried after the worker's death (heartbeat timeout), completed.
      expect(await scheduledActivities(s)).toEqual([{ type: 'runModelStep', end: 'completed' }]);
      await worker.stop();
    } finally {
      await first?.stop('SIGKILL');
      await second?.stop();
      await model.close();
      await api.close();
    }
  }, 240_000);
});
