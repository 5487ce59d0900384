import { decodeWorkSecret } from '@mango/feature-work';
import {
  localActivityTypes,
  recordHistory,
  SessionStack,
  STACK_TIMEOUT_MS,
  sessionEvents,
  startSessionStack,
  untilEvents,
} from './support';
import { httpClient, HttpClient, ApiUnderTest, ScriptedModelServer } from '@mango/testing';

/**
 * The Session path with a sandbox tool (docs/operator-guide.md, The Docker supervisor) over real processes: the model asks for `bash`; a test worker using raw HTTP
 * claims the Session Work with the Environment key, heartbeats and reads the Session with the Work token,
 * posts `user.tool_result`, and the model finishes. The exact event sequence is asserted.
 */
describe('a self-hosted tool round trip (real API, orchestrator, Temporal, scripted model, raw-HTTP worker)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let envId: string;
  let supervisor: HttpClient;

  let stack: SessionStack;

  beforeAll(async () => {
    stack = await startSessionStack('tools', { environment: true });
    ({ api, model, ws } = stack);
    envId = stack.environmentId!;
    supervisor = stack.supervisor!;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  const events = (sessionId: string) => sessionEvents(ws, sessionId);
  const until = (sessionId: string, predicate: Parameters<typeof untilEvents>[2]) =>
    untilEvents(ws, sessionId, predicate);

  it('bash: agent.tool_use(allow) → the worker runs it and posts user.tool_result → the model finishes', async () => {
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'echo hi' } }],
        stop_reason: 'tool_use',
      },
      (body) => {
        const last = body.messages.at(-1);
        return {
          content: [{ type: 'text', text: `The command printed: ${last.content[0].content[0].text}` }],
        };
      },
    );
    const agent = (
      await ws.post('/v1/agents', { name: 'coder', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
    ).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run echo hi' }] }],
      })
    ).body;

    // The worker: claim the Session Work, Ack, heartbeat with the Work token.
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    expect(
      (
        await worker.post(
          `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
        )
      ).status,
    ).toBe(200);

    // It reads its Session with the token and finds the tool call.
    const withUse = await until(s.id, (list) => list.some((e) => e.type === 'agent.tool_use'));
    const use = withUse.find((e) => e.type === 'agent.tool_use')!;
    expect(use).toMatchObject({ name: 'bash', input: { command: 'echo hi' }, evaluated_permission: 'allow' });
    const seen = await worker.get(`/v1/sessions/${s.id}/events?limit=1000`);
    expect(seen.body.data.map((e: { id: string }) => e.id)).toContain(use.id);
    // The token may not post anything but tool results, nor reach other Sessions or routes.
    expect(
      (
        await worker.post(`/v1/sessions/${s.id}/events`, {
          events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }],
        })
      ).status,
    ).toBe(403);
    expect((await worker.get('/v1/agents')).status).toBe(403);

    const result = { type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'hi' }] };
    const posted = await worker.post(`/v1/sessions/${s.id}/events`, { events: [result] });
    expect(posted.status).toBe(200);
    // A retry after a lost response returns the stored event; a different answer is a conflict.
    const again = await worker.post(`/v1/sessions/${s.id}/events`, { events: [result] });
    expect(again.body.data[0].id).toBe(posted.body.data[0].id);
    expect(
      (
        await worker.post(`/v1/sessions/${s.id}/events`, {
          events: [{ ...result, content: [{ type: 'text', text: 'other' }] }],
        })
      ).status,
    ).toBe(409);
    // The Workspace key cannot fabricate tool results.
    expect((await ws.post(`/v1/sessions/${s.id}/events`, { events: [result] })).status).toBe(403);

    const done = await until(s.id, (list) => list.some((e) => e.type === 'session.status_idle'));
    expect(done.map((e) => e.type)).toEqual([
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
    ]);
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('The command printed: hi');
    expect(model.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'run echo hi' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: use.id, name: 'bash', input: { command: 'echo hi' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: use.id,
            content: [{ type: 'text', text: 'hi' }],
            is_error: false,
          },
        ],
      },
    ]);
    // The step said its call had no result yet, so the wait for it took no look at the log: the result's
    // signal alone moved the turn (no local activity held the workflow task open in between).
    expect(await localActivityTypes(s.id)).toEqual(['resumeState', 'beginTurn', 'endTurn']);
    // RECORD_HISTORIES=dir keeps this workflow's history as a replay fixture (apps/orchestrator/test/histories).
    await recordHistory(s.id, 'session-tool-round-trip');
    // After Stop the token is dead: no more results, no more reads.
    expect(
      (await ws.post(`/v1/environments/${envId}/work/${polled.body.id}/stop`, { force: true })).status,
    ).toBe(204);
    expect((await worker.post(`/v1/sessions/${s.id}/events`, { events: [result] })).status).toBe(401);
    expect((await worker.get(`/v1/sessions/${s.id}`)).status).toBe(401);
    // The default toolset also enables the web tools: declared as the endpoint's server tools.
    expect(model.requests[0]!.body.tools.map((t: { name: string }) => t.name)).toEqual([
      'bash',
      'read',
      'write',
      'edit',
      'glob',
      'grep',
      'web_search',
      'web_fetch',
    ]);
  }, 120_000);

  it('always_ask: the turn idles with requires_action naming the call, and nothing is run', async () => {
    model.script({
      content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'rm -rf /' } }],
      stop_reason: 'tool_use',
    });
    const agent = (
      await ws.post('/v1/agents', {
        name: 'careful',
        model: 'm',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
          },
        ],
      })
    ).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'clean up' }] }],
      })
    ).body;
    const done = await until(s.id, (list) => list.some((e) => e.type === 'session.status_idle'));
    const use = done.find((e) => e.type === 'agent.tool_use')!;
    expect(use.evaluated_permission).toBe('ask');
    expect(done.at(-1)).toMatchObject({
      type: 'session.status_idle',
      stop_reason: { type: 'requires_action', event_ids: [use.id] },
    });
  }, 120_000);

  /** Each of these tests gets its own Environment (its own queue) and supervisor key. */
  async function freshEnv() {
    const id = (await ws.post('/v1/environments', { name: `pool-${Date.now()}-${Math.random()}` })).body
      .id as string;
    return { id, supervisor: httpClient(api.url, (await api.issueKey('wrkspc_default', id)).api_key) };
  }

  async function claimWorker(env: { id: string; supervisor: HttpClient }, sessionId: string) {
    const polled = await env.supervisor.get(`/v1/environments/${env.id}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: sessionId });
    await env.supervisor.post(`/v1/environments/${env.id}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${env.id}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    return { worker, workId: polled.body.id as string };
  }

  const askingAgent = async () =>
    (
      await ws.post('/v1/agents', {
        name: `asker-${Date.now()}`,
        model: 'm',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
          },
        ],
      })
    ).body.id as string;

  it('always_ask + allow: the worker may run the call only after the persisted allow; then the model finishes', async () => {
    const env = await freshEnv();
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_3', name: 'bash', input: { command: 'date' } }],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'It is today.' }] },
    );
    const s = (
      await ws.post('/v1/sessions', {
        agent: await askingAgent(),
        environment_id: env.id,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'what day?' }] }],
      })
    ).body;
    const { worker, workId } = await claimWorker(env, s.id);
    const idle = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    const use = idle.find((e) => e.type === 'agent.tool_use')!;
    const result = {
      type: 'user.tool_result',
      tool_use_id: use.id,
      content: [{ type: 'text', text: 'Sunday' }],
    };
    // Before the allow, running it is refused.
    expect((await worker.post(`/v1/sessions/${s.id}/events`, { events: [result] })).status).toBe(409);
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }],
    });
    // A second, different verdict is a conflict.
    expect(
      (
        await ws.post(`/v1/sessions/${s.id}/events`, {
          events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny' }],
        })
      ).status,
    ).toBe(409);
    // The worker sees the persisted allow (and the resumed turn) before it runs the call.
    await until(s.id, (l) => l.filter((e) => e.type === 'session.status_running').length >= 2);
    expect((await worker.post(`/v1/sessions/${s.id}/events`, { events: [result] })).status).toBe(200);
    const done = await until(s.id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(done.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'session.status_idle',
      'user.tool_confirmation',
      'session.status_running',
      'user.tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(done.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    await ws.post(`/v1/environments/${env.id}/work/${workId}/stop`, { force: true });
  }, 120_000);

  it('always_ask + deny: the call never runs; the model hears the denial and answers', async () => {
    const env = await freshEnv();
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_4', name: 'bash', input: { command: 'rm -rf /' } }],
        stop_reason: 'tool_use',
      },
      (body) => ({
        content: [{ type: 'text', text: `Understood: ${body.messages.at(-1).content[0].content}` }],
      }),
    );
    const s = (
      await ws.post('/v1/sessions', {
        agent: await askingAgent(),
        environment_id: env.id,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'clean' }] }],
      })
    ).body;
    const { worker, workId } = await claimWorker(env, s.id);
    const idle = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    const use = idle.find((e) => e.type === 'agent.tool_use')!;
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [
        {
          type: 'user.tool_confirmation',
          tool_use_id: use.id,
          result: 'deny',
          deny_message: 'Not on production.',
        },
      ],
    });
    const done = await until(s.id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe(
      'Understood: Not on production.',
    );
    expect(done.some((e) => e.type === 'user.tool_result')).toBe(false);
    expect(
      (
        await worker.post(`/v1/sessions/${s.id}/events`, {
          events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [] }],
        })
      ).status,
    ).toBe(409);
    await ws.post(`/v1/environments/${env.id}/work/${workId}/stop`, { force: true });
  }, 120_000);

  it('a custom tool: agent.custom_tool_use idles requires_action; the application answers and the model finishes', async () => {
    const env = await freshEnv();
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_5', name: 'lookup_order', input: { order: 'A-1' } }],
        stop_reason: 'tool_use',
      },
      (body) => ({
        content: [{ type: 'text', text: `Order status: ${body.messages.at(-1).content[0].content[0].text}` }],
      }),
    );
    const agent = (
      await ws.post('/v1/agents', {
        name: 'support',
        model: 'm',
        tools: [
          {
            type: 'custom',
            name: 'lookup_order',
            description: 'Look up an order',
            input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          },
        ],
      })
    ).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: env.id,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'where is A-1?' }] }],
      })
    ).body;
    const idle = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    const use = idle.find((e) => e.type === 'agent.custom_tool_use')!;
    expect(use).toMatchObject({ name: 'lookup_order', input: { order: 'A-1' } });
    expect(idle.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
    expect(model.requests.at(-1)!.body.tools.map((t: { name: string }) => t.name)).toEqual(['lookup_order']);
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [
        {
          type: 'user.custom_tool_result',
          custom_tool_use_id: use.id,
          content: [{ type: 'text', text: 'shipped' }],
        },
      ],
    });
    const done = await until(s.id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('Order status: shipped');
    expect(done.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
  }, 120_000);
  it("operator custom tools: the Work token answers its own Session's agent.custom_tool_use under the live lease only", async () => {
    // Each reply names the result the model received, so the answer that reached it is asserted.
    const answered = (body: any) => ({
      content: [{ type: 'text', text: `Order status: ${body.messages.at(-1).content[0].content[0].text}` }],
    });
    const call = (id: string) => ({
      content: [{ type: 'tool_use', id, name: 'lookup_order', input: { order: id } }],
      stop_reason: 'tool_use',
    });
    const agent = (
      await ws.post('/v1/agents', {
        name: `operator-${Date.now()}`,
        model: 'm',
        tools: [
          {
            type: 'custom',
            name: 'lookup_order',
            description: 'Look up an order',
            input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          },
        ],
      })
    ).body.id;
    const start = async (env: { id: string }) =>
      (
        await ws.post('/v1/sessions', {
          agent,
          environment_id: env.id,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'where is it?' }] }],
        })
      ).body.id as string;
    const envA = await freshEnv();
    const envB = await freshEnv();
    model.script(call('toolu_ca'));
    const a = await start(envA);
    const idleA = await until(a, (l) => l.some((e) => e.type === 'session.status_idle'));
    model.script(call('toolu_cb'));
    const b = await start(envB);
    const idleB = await until(b, (l) => l.some((e) => e.type === 'session.status_idle'));
    const useA = idleA.find((e) => e.type === 'agent.custom_tool_use')!;
    const useB = idleB.find((e) => e.type === 'agent.custom_tool_use')!;
    expect(idleA.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [useA.id] });
    // Session Work exists for both (the message made it; the custom call keeps it so a worker can claim it).
    const workerA = await claimWorker(envA, a);
    const workerB = await claimWorker(envB, b);
    const result = (id: string, text: string) => ({
      events: [
        { type: 'user.custom_tool_result', custom_tool_use_id: id, content: [{ type: 'text', text }] },
      ],
    });

    // Another Session's call: on its own path it is not this Session's call (400); on the other path, 404.
    const foreign = await workerA.worker.post(`/v1/sessions/${a}/events`, result(useB.id, 'forged'), {
      contract: false,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.type).toBe('invalid_request_error');
    const elsewhere = await workerA.worker.post(`/v1/sessions/${b}/events`, result(useB.id, 'forged'), {
      contract: false,
    });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.type).toBe('not_found_error');

    // Its own call under the live lease: accepted, and the model sees the worker's answer.
    model.script(answered);
    const own = await workerA.worker.post(`/v1/sessions/${a}/events`, result(useA.id, 'shipped'));
    expect(own.status).toBe(200);
    expect(own.body.data[0]).toMatchObject({ type: 'user.custom_tool_result', custom_tool_use_id: useA.id });
    const doneA = await until(a, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(doneA.find((e) => e.type === 'agent.message')!.content[0].text).toBe('Order status: shipped');

    // After its lease is gone (the Work stopped), the token is refused (401) and nothing is appended.
    await ws.post(`/v1/environments/${envB.id}/work/${workerB.workId}/stop`, { force: true });
    const late = await workerB.worker.post(`/v1/sessions/${b}/events`, result(useB.id, 'late'), {
      contract: false,
    });
    expect(late.status).toBe(401);
    expect(late.body.error.type).toBe('authentication_error');
    expect((await events(b)).some((e) => e.type === 'user.custom_tool_result')).toBe(false);
    // The application can still answer it with the Workspace key.
    model.script(answered);
    await ws.post(`/v1/sessions/${b}/events`, result(useB.id, 'from the app'));
    const doneB = await until(b, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(doneB.find((e) => e.type === 'agent.message')!.content[0].text).toBe('Order status: from the app');
    await ws.post(`/v1/environments/${envA.id}/work/${workerA.workId}/stop`, { force: true });
  }, 180_000);
});
