import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, HttpClient, ApiUnderTest, ScriptedModelServer } from '@mango/testing';
import { Client, Connection } from '@temporalio/client';
import { recordHistory, SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';

type Ev = { id: string; type: string; [k: string]: any };

/**
 * Interrupts, model failures (retried with session.status_rescheduled, or exhausted) and the budget gate,
 * over real processes: apps/api, apps/orchestrator on Temporal, PostgreSQL and the scripted Messages API.
 */
describe('interrupts, retries and budgets in the Session loop (real API, orchestrator, Temporal, scripted model)', () => {
  let api: ApiUnderTest;
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let apiKey: string;
  let envId: string;
  let supervisor: HttpClient;
  let toolAgent: string;
  let chatAgent: string;

  beforeAll(async () => {
    stack = await startSessionStack('control', { environment: true });
    ({ api, model, ws, key: apiKey } = stack);
    envId = stack.environmentId!;
    supervisor = stack.supervisor!;
    toolAgent = (
      await ws.post('/v1/agents', {
        name: 'coder',
        model: 'claude-sonnet-4-6',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).body.id;
    chatAgent = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6' })).body.id;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  type Frame = { event: string; id: string | undefined; data: any };
  /** Reads one SSE response until session.status_idle. */
  async function readUntilIdle(res: Response): Promise<Frame[]> {
    const frames: Frame[] = [];
    const reader = res.body!.getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buffer += Buffer.from(value).toString('utf8');
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const lines = buffer.slice(0, at).split('\n');
        buffer = buffer.slice(at + 2);
        const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        const frame = { event: field('event')!, id: field('id'), data: JSON.parse(field('data') ?? '{}') };
        if (frame.event === 'ping') continue;
        frames.push(frame);
        if (frame.event === 'session.status_idle') {
          await reader.cancel();
          return frames;
        }
      }
    }
  }

  const events = async (sessionId: string): Promise<Ev[]> =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data;

  async function until(
    sessionId: string,
    predicate: (e: Ev[]) => boolean,
    timeoutMs = 60_000,
  ): Promise<Ev[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const list = await events(sessionId);
      if (predicate(list) || Date.now() > deadline) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const idles = (n: number) => (list: Ev[]) =>
    list.filter((e) => e.type === 'session.status_idle').length >= n;
  const text = (t: string) => ({ type: 'user.message', content: [{ type: 'text', text: t }] });

  async function start(agent: string, message: string, extra: Record<string, unknown> = {}) {
    return (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [text(message)],
        ...extra,
      })
    ).body as { id: string };
  }

  it('an interrupt while a tool runs closes the call: the late result is 409 and the model sees the call interrupted', async () => {
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'sleep 100' } }],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Understood, stopped.' }] },
    );
    const s = await start(toolAgent, 'sleep');
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const withUse = await until(s.id, (l) => l.some((e) => e.type === 'agent.tool_use'));
    const use = withUse.find((e) => e.type === 'agent.tool_use')!;

    await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    const list = await until(s.id, idles(1));
    expect(list.slice(-2).map((e) => [e.type, e.stop_reason])).toEqual([
      ['user.interrupt', undefined],
      ['session.status_idle', { type: 'end_turn' }],
    ]);
    const late = await worker.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'done' }] }],
    });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toMatch(/interrupted/);
    expect((await events(s.id)).some((e) => e.type === 'user.tool_result')).toBe(false);

    await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('what happened?')] });
    await until(s.id, idles(2));
    expect(model.requests.at(-1)!.body.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: use.id, name: 'bash', input: { command: 'sleep 100' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: use.id,
            content: 'Tool execution was interrupted before completion. Please retry.',
            is_error: true,
          },
          { type: 'text', text: 'what happened?' },
        ],
      },
    ]);
    await recordHistory(s.id, 'session-interrupt-tool');
    await worker.post(`/v1/environments/${envId}/work/${polled.body.id}/stop`, { force: true });
  }, 120_000);

  it('a Work item stopped while its Session is still running is replaced at once; the next worker finishes the turn', async () => {
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'echo later' } }],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Done by the second worker.' }] },
    );
    const s = await start(toolAgent, 'race');
    const first = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(first.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${envId}/work/${first.body.id}/ack`);
    const w1 = httpClient(api.url, decodeWorkSecret(first.body.secret).sessions_token);
    await w1.post(
      `/v1/environments/${envId}/work/${first.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const use = (await until(s.id, (l) => l.some((e) => e.type === 'agent.tool_use'))).find(
      (e) => e.type === 'agent.tool_use',
    )!;
    // The worker stops its activation (as if its idle check raced the tool call).
    expect(
      (await w1.post(`/v1/environments/${envId}/work/${first.body.id}/stop`, { force: true })).status,
    ).toBe(204);
    const second = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(second.body.data).toEqual({ type: 'session', id: s.id });
    expect(second.body.id).not.toBe(first.body.id);
    await supervisor.post(`/v1/environments/${envId}/work/${second.body.id}/ack`);
    const w2 = httpClient(api.url, decodeWorkSecret(second.body.secret).sessions_token);
    await w2.post(
      `/v1/environments/${envId}/work/${second.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const posted = await w2.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'later' }] }],
    });
    expect(posted.status).toBe(200);
    const list = await until(s.id, idles(1));
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    expect(list.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
      'Done by the second worker.',
    ]);
    await w2.post(`/v1/environments/${envId}/work/${second.body.id}/stop`, { force: true });
    // Idle now: stopping makes no new item.
    const rows = await api.sql<{ n: string }>(
      `SELECT count(*) AS n FROM work_items WHERE session_id = $1 AND state <> 'stopped'`,
      [s.id],
    );
    expect(Number(rows[0]!.n)).toBe(0);
  }, 120_000);

  it("the worker's Fail terminates the Session: session.error(session_input_failed_error, terminal), status_terminated, input refused", async () => {
    model.script({
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'cat /bad' } }],
      stop_reason: 'tool_use',
    });
    const s = await start(toolAgent, 'read the bad input');
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    await until(s.id, (l) => l.some((e) => e.type === 'agent.tool_use'));
    const failed = await worker.post(`/v1/environments/${envId}/work/${polled.body.id}/fail`, {
      message: 'the skill bundle is corrupt',
    });
    expect(failed.status).toBe(200);
    const list = await events(s.id);
    expect(list.slice(-2)).toEqual([
      expect.objectContaining({
        type: 'session.error',
        error: {
          type: 'session_input_failed_error',
          message: 'the skill bundle is corrupt',
          retry_status: { type: 'terminal' },
        },
      }),
      expect.objectContaining({ type: 'session.status_terminated' }),
    ]);
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('terminated');
    const refused = await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('hello?')] });
    expect(refused.status).toBe(409);
    // The workflow ends instead of waiting forever for the tool result.
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const handle = new Client({ connection }).workflow.getHandle(s.id);
      await expect(handle.result()).resolves.toBeUndefined();
    } finally {
      await connection.close();
    }
    expect((await events(s.id)).length).toBe(list.length);
  }, 120_000);

  it('an interrupt during the model request cancels it: the span closes, the turn ends idle(end_turn), and the next message runs', async () => {
    model.script(
      { content: [{ type: 'text', text: 'never delivered' }], delayMs: 20_000 },
      { content: [{ type: 'text', text: 'Back again.' }] },
    );
    const s = await start(chatAgent, 'think for a long time');
    await until(s.id, (l) => l.some((e) => e.type === 'span.model_request_start'));
    const sent = await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    expect(sent.status).toBe(200);
    const list = await until(s.id, idles(1));
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'user.interrupt',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(list[4]).toMatchObject({ model_request_start_id: list[2]!.id, is_error: null });
    expect(list[5]!.stop_reason).toEqual({ type: 'end_turn' });
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('idle');

    await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('again')] });
    const after = await until(s.id, idles(2));
    expect(after.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
      'Back again.',
    ]);
  }, 120_000);

  it('an interrupt against an idle Session is recorded and changes nothing', async () => {
    model.script({ content: [{ type: 'text', text: 'Hi.' }] });
    const s = await start(chatAgent, 'hello');
    await until(s.id, idles(1));
    const requests = model.requests.length;
    expect(
      (await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] })).status,
    ).toBe(200);
    const list = await until(s.id, (l) => l.at(-1)?.type === 'user.interrupt');
    expect(list.map((e) => e.type).slice(-2)).toEqual(['session.status_idle', 'user.interrupt']);
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('idle');
    expect(model.requests.length).toBe(requests);
  }, 60_000);

  it('overloaded and rate-limited answers are retried: session.error(retrying) + rescheduled, then the turn completes', async () => {
    model.script(
      { status: 529, error: 'overloaded' },
      { status: 429, error: 'slow down' },
      { content: [{ type: 'text', text: 'Third time lucky.' }] },
    );
    const s = await start(chatAgent, 'flaky');
    const list = await until(s.id, idles(1));
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'span.model_request_end',
      'session.error',
      'session.status_rescheduled',
      'session.status_running',
      'span.model_request_start',
      'span.model_request_end',
      'session.error',
      'session.status_rescheduled',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(list[3]).toMatchObject({ model_request_start_id: list[2]!.id, is_error: true });
    expect(list[4]!.error).toEqual({
      type: 'model_overloaded_error',
      message: 'The model endpoint answered 529',
      retry_status: { type: 'retrying' },
    });
    expect(list[9]!.error).toMatchObject({
      type: 'model_rate_limited_error',
      retry_status: { type: 'retrying' },
    });
    expect(list[14]).toMatchObject({ model_request_start_id: list[12]!.id, is_error: false });
    expect(list[15]!.stop_reason).toEqual({ type: 'end_turn' });
    await recordHistory(s.id, 'session-model-retries');
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('idle');
  }, 120_000);

  it('a request the endpoint refuses (400) is not retried: session.error(exhausted) and idle(retries_exhausted)', async () => {
    model.script({ status: 400, error: 'bad request' }, { content: [{ type: 'text', text: 'Fine now.' }] });
    const s = await start(chatAgent, 'refused');
    const list = await until(s.id, idles(1));
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'span.model_request_end',
      'session.error',
      'session.status_idle',
    ]);
    expect(list[4]!.error).toEqual({
      type: 'model_request_failed_error',
      message: 'The model endpoint answered 400',
      retry_status: { type: 'exhausted' },
    });
    expect(list[5]!.stop_reason).toEqual({ type: 'retries_exhausted' });
    // The Session is usable again.
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('try again')] });
    const after = await until(s.id, idles(2));
    expect(after.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
  }, 120_000);

  it('five failed attempts exhaust the retries', async () => {
    model.script(...Array.from({ length: 5 }, () => ({ status: 503, error: 'unavailable' })));
    const s = await start(chatAgent, 'doomed');
    const list = await until(s.id, idles(1), 90_000);
    const errors = list.filter((e) => e.type === 'session.error').map((e) => e.error.retry_status.type);
    expect(errors).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'exhausted']);
    expect(list.filter((e) => e.type === 'session.status_rescheduled')).toHaveLength(4);
    expect(list.filter((e) => e.type === 'span.model_request_start')).toHaveLength(5);
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'retries_exhausted' });
  }, 120_000);

  it('the budget gate pauses with budget_reached; messages are refused until the budget is raised, which resumes the turn', async () => {
    const custom = (
      await ws.post('/v1/agents', {
        name: 'priced',
        model: 'claude-sonnet-4-6',
        tools: [
          {
            type: 'custom',
            name: 'lookup',
            description: 'Look a thing up',
            input_schema: { type: 'object' },
          },
        ],
      })
    ).body.id;
    // 2,000 input + 400 output tokens at $3/$15 per million = 1.2 cents → list cost 2 cents ≥ a 1-cent cap.
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 2000, output_tokens: 400 },
      },
      { content: [{ type: 'text', text: 'Resumed and done.' }] },
    );
    const s = await start(custom, 'look it up', {
      budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } },
    });
    const first = await until(s.id, idles(1));
    const use = first.find((e) => e.type === 'agent.custom_tool_use')!;
    expect(first.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.usage.list_cost).toEqual({
      amount: '2',
      currency: 'USD',
    });

    // A requires_action outranks the budget: the settle event is accepted, then the gate stops the turn.
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [
        {
          type: 'user.custom_tool_result',
          custom_tool_use_id: use.id,
          content: [{ type: 'text', text: '42' }],
        },
      ],
    });
    const paused = await until(s.id, idles(2));
    expect(paused.slice(-4).map((e) => e.type)).toEqual([
      'user.custom_tool_result',
      'session.status_running',
      'session.usage',
      'session.status_idle',
    ]);
    expect(paused.at(-2)).toMatchObject({
      usage: { input_tokens: 2000, output_tokens: 400, list_cost: { amount: '2', currency: 'USD' } },
      budget: { max_list_cost: { amount: '1' } },
    });
    expect(paused.at(-1)!.stop_reason).toEqual({ type: 'budget_reached' });
    const requestsAtPause = model.requests.length;

    // Paused: a message is refused and stored nowhere; an interrupt is accepted and ignored.
    const refused = await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('more please')] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/budget/);
    const ignored = await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    expect(ignored.status).toBe(200);
    expect(ignored.body.data).toEqual([]);
    expect((await events(s.id)).length).toBe(paused.length);
    // A new limit must exceed what was spent.
    const tooLow = await ws.post(`/v1/sessions/${s.id}`, {
      budget: { type: 'limit', max_list_cost: { amount: '2', currency: 'USD' } },
    });
    expect(tooLow.status).toBe(400);
    expect(model.requests.length).toBe(requestsAtPause);

    // Raising it resumes the paused turn: the model answers the tool result.
    await ws.post(`/v1/sessions/${s.id}`, {
      budget: { type: 'limit', max_list_cost: { amount: '500', currency: 'USD' } },
    });
    const resumed = await until(s.id, idles(3));
    expect(resumed.slice(paused.length).map((e) => e.type)).toEqual([
      'session.updated',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(resumed.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    expect(model.requests.at(-1)!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: use.id,
          content: [{ type: 'text', text: '42' }],
          is_error: false,
        },
      ],
    });
    // Now messages are accepted again.
    model.script({ content: [{ type: 'text', text: 'You are welcome.' }] });
    expect((await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('thanks')] })).status).toBe(200);
    expect((await until(s.id, idles(4))).at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    await recordHistory(s.id, 'session-budget-pause');
  }, 120_000);

  it('event_deltas[]=agent.message streams previews: one event_start, deltas that build the text, then the buffered event', async () => {
    const reply = 'Streaming previews arrive before the buffered message.';
    model.script({ content: [{ type: 'text', text: reply }], chunkChars: 6, chunkDelayMs: 40 });
    const s = (await ws.post('/v1/sessions', { agent: chatAgent, environment_id: envId })).body as {
      id: string;
    };
    const open = (query: string) =>
      fetch(`${api.url}/v1/sessions/${s.id}/events/stream${query}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
    const bad = await open('?event_deltas[]=agent.tool_use');
    expect(bad.status).toBe(400);
    const [withDeltas, plain] = await Promise.all([open('?event_deltas[]=agent.message'), open('')]);
    const reading = [readUntilIdle(withDeltas), readUntilIdle(plain)];
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [text('stream it')] });
    const [frames, plainFrames] = await Promise.all(reading);

    const message = frames.find((f) => f.event === 'agent.message')!;
    const starts = frames.filter((f) => f.event === 'event_start');
    const deltas = frames.filter((f) => f.event === 'event_delta');
    expect(starts).toEqual([
      {
        event: 'event_start',
        id: undefined,
        data: { type: 'event_start', event: { type: 'agent.message', id: message.data.id } },
      },
    ]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.id === undefined && d.data.event_id === message.data.id)).toBe(true);
    expect(deltas.map((d) => d.data.delta.content.text).join('')).toBe(reply);
    const order = frames.map((f) => f.event);
    expect(order.indexOf('event_start')).toBeLessThan(order.indexOf('event_delta'));
    expect(order.lastIndexOf('event_delta')).toBeLessThan(order.indexOf('agent.message'));
    expect(order.indexOf('span.model_request_start')).toBeLessThan(order.indexOf('event_start'));
    // Without the opt-in: only persisted events, the same ones.
    expect(plainFrames.map((f) => f.event)).toEqual(order.filter((e) => !e.startsWith('event_')));
  }, 60_000);

  it('a budget with an unpriced model is refused at creation', async () => {
    const unpriced = (await ws.post('/v1/agents', { name: 'local', model: 'my-local-model' })).body.id;
    const res = await ws.post('/v1/sessions', {
      agent: unpriced,
      environment_id: envId,
      budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/priced model/);
  });
});
