import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, type HttpClient, type ScriptedReply } from '@mango/testing';
import { threadWorkflowId } from '@mango/domain-sessions';
import {
  recordHistory,
  type SessionEvent,
  type SessionStack,
  STACK_TIMEOUT_MS,
  startOrchestrator,
  startSessionStack,
  TEST_MODEL,
} from './support';

/**
 * Multi-agent Threads (ADR 0017, docs/api-guide.md "Multi-agent Threads") over real processes: apps/api,
 * apps/orchestrator on Temporal and PostgreSQL, and the scripted Messages API answering the coordinator,
 * its delegates and the Advisor by their system prompts.
 */
/** The usual window for 'm', and a small one for the compaction test's delegate (80% of 6,000 tokens). */
const PROFILES = JSON.stringify({
  [TEST_MODEL]: { context_window: 200_000 },
  'small-window-model': { context_window: 6000, max_output_tokens: 1500 },
});

describe('multi-agent Threads (real API, orchestrator, Temporal, scripted model)', () => {
  let stack: SessionStack;
  let ws: HttpClient;
  let envId: string;
  let coordinator: string;

  const text = (
    t: string,
    extra: Partial<Extract<ScriptedReply, { content: unknown }>> = {},
  ): ScriptedReply => ({
    content: [{ type: 'text', text: t }],
    ...extra,
  });
  const call = (id: string, name: string, input: Record<string, unknown>): ScriptedReply => ({
    content: [{ type: 'tool_use', id, name, input }],
    stop_reason: 'tool_use',
  });
  const userTexts = (body: any): string[] =>
    (body.messages as Array<{ role: string; content: any }>)
      .filter((m) => m.role === 'user')
      .flatMap((m) => (Array.isArray(m.content) ? m.content : [{ type: 'text', text: m.content }]))
      .filter((b: any) => b.type === 'text')
      .map((b: any) => b.text as string);
  const lastIsToolResult = (body: any) => {
    const last = body.messages.at(-1);
    return Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  };
  const sent = (body: any) =>
    (body.messages as Array<{ role: string; content: any }>)
      .filter((m) => m.role === 'assistant' && Array.isArray(m.content))
      .flatMap((m) => m.content)
      .filter((b: any) => b.type === 'tool_use' && b.name === 'send_to_agent').length;

  /** The scripted model, routed by system prompt (delegates answer after a pause, so each turn's order is fixed). */
  const routes: Record<string, (body: any) => ScriptedReply> = {};
  const route = (body: any): ScriptedReply => {
    const system = String(body.system ?? '');
    const key = Object.keys(routes).find((k) => system.startsWith(k));
    return key ? routes[key]!(body) : { status: 500, error: `no route for system ${system.slice(0, 40)}` };
  };

  beforeAll(async () => {
    stack = await startSessionStack('threads', {
      environment: true,
      // A small window for the compaction test's delegate (80% of 6,000 tokens), the usual one for 'm'.
      orchestratorEnv: { MANGO_MODEL_PROFILES: PROFILES },
    });
    ws = stack.ws;
    envId = stack.environmentId!;
    stack.model.script(...Array.from({ length: 400 }, () => route));
    const researcher = (
      await ws.post('/v1/agents', {
        name: 'researcher',
        description: 'Finds facts',
        model: TEST_MODEL,
        system: 'You research.',
      })
    ).body.id;
    const writer = (await ws.post('/v1/agents', { name: 'writer', model: TEST_MODEL, system: 'You write.' }))
      .body.id;
    coordinator = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: TEST_MODEL,
        system: 'You coordinate.',
        multiagent: {
          type: 'coordinator',
          agents: [researcher, writer, { type: 'advisor', model: TEST_MODEL }],
        },
      })
    ).body.id;
    if (!/^agent_/.test(coordinator)) throw new Error('the coordinator Agent was not created');
  }, STACK_TIMEOUT_MS);

  /** The orchestrator the archive test starts after killing the stack's (closed here too). */
  let restarted: Awaited<ReturnType<typeof startOrchestrator>> | undefined;
  afterAll(async () => {
    await restarted?.stop();
    await stack?.close();
  });

  const events = async (sessionId: string, threadId?: string): Promise<SessionEvent[]> =>
    (
      await ws.get(
        threadId
          ? `/v1/sessions/${sessionId}/threads/${threadId}/events?limit=1000`
          : `/v1/sessions/${sessionId}/events?limit=1000`,
      )
    ).body.data;
  async function until(check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  /** The first `count` events of an SSE stream (from its start), by data id. */
  async function streamed(path: string, count: number): Promise<string[]> {
    const res = await fetch(`${stack.api.url}${path}`, { headers: { authorization: `Bearer ${stack.key}` } });
    const reader = res.body!.getReader();
    const ids: string[] = [];
    let buffer = '';
    const deadline = Date.now() + 30_000;
    while (ids.length < count && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += Buffer.from(value).toString('utf8');
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, at).split('\n');
        buffer = buffer.slice(at + 2);
        const data = frame.find((l) => l.startsWith('data: '));
        if (frame.some((l) => l.startsWith('id: ')) && data) ids.push(JSON.parse(data.slice(6)).id);
      }
    }
    await reader.cancel().catch(() => undefined);
    return ids;
  }
  const start = async (message: string, environmentId = envId) => {
    const res = await ws.post('/v1/sessions', {
      agent: coordinator,
      environment_id: environmentId,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: message }] }],
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const threads = async (sessionId: string) =>
    (await ws.get(`/v1/sessions/${sessionId}/threads`)).body.data as Array<Record<string, any>>;
  const own = (list: SessionEvent[]) => list.filter((e) => !e.session_thread_id).map((e) => e.type);

  it('a coordinator delegates to two roster Agents, one of them twice: exact Thread histories, reports as messages', async () => {
    routes['You coordinate.'] = (body) => {
      const n = sent(body);
      if (lastIsToolResult(body)) return text(`Sent ${n}.`);
      if (n === 0) return call('c1', 'send_to_agent', { agent: 'researcher', message: 'Find one sea fact.' });
      if (n === 1)
        return call('c2', 'send_to_agent', { agent: 'writer', message: 'Draft a line about salt.' });
      if (n === 2) return call('c3', 'send_to_agent', { agent: 'researcher', message: 'And how salty?' });
      return text('All done.');
    };
    routes['You research.'] = (body) =>
      userTexts(body).length === 1
        ? text('The sea is salty.', { delayMs: 1500 })
        : text('About 3.5% salt.', { delayMs: 1500 });
    routes['You write.'] = () => text('Salt is the sea remembering.', { delayMs: 1500 });
    const id = await start('Write about the sea with help.');
    await until(async () => {
      const session = (await ws.get(`/v1/sessions/${id}`)).body;
      const list = await events(id);
      return (
        session.status === 'idle' &&
        list.some((e) => e.type === 'agent.message' && e.content[0].text === 'All done.')
      );
    });
    const list = await events(id);
    const primary = (await threads(id))[0]!;
    const all = await threads(id);
    expect(all.map((t) => [t.parent_thread_id, t.agent?.name ?? null, t.status])).toEqual([
      [null, 'lead', 'idle'],
      [primary.id, 'researcher', 'idle'],
      [primary.id, 'writer', 'idle'],
    ]);
    const [, researcher, writer] = all;
    // The primary's own events: four turns — delegate, delegate, follow up, answer — each started by the
    // previous delegate's report.
    const turn = (callEvents: string[]) => [
      'session.status_running',
      'span.model_request_start',
      ...callEvents,
      'span.model_request_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ];
    const delegating = ['agent.tool_use', 'agent.tool_result', 'agent.thread_message_sent'];
    expect(own(list)).toEqual([
      'user.message',
      ...turn(delegating),
      'agent.thread_message_received',
      ...turn(delegating),
      'agent.thread_message_received',
      ...turn(delegating),
      'agent.thread_message_received',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    // The primary stream also shows every Thread's lifecycle (with its id), never a delegate's replies.
    const cross = list.filter((e) => e.session_thread_id);
    expect(new Set(cross.map((e) => e.type))).toEqual(
      new Set(['session.thread_created', 'session.thread_status_running', 'session.thread_status_idle']),
    );
    expect(
      cross
        .filter((e) => e.type === 'session.thread_created')
        .map((e) => [e.session_thread_id, e.agent_name]),
    ).toEqual([
      [researcher!.id, 'researcher'],
      [writer!.id, 'writer'],
    ]);
    const sentEvents = list.filter((e) => e.type === 'agent.thread_message_sent');
    expect(sentEvents.map((e) => [e.to_session_thread_id, e.to_agent_name, e.content[0].text])).toEqual([
      [researcher!.id, 'researcher', 'Find one sea fact.'],
      [writer!.id, 'writer', 'Draft a line about salt.'],
      [researcher!.id, 'researcher', 'And how salty?'],
    ]);
    const received = list.filter((e) => e.type === 'agent.thread_message_received');
    expect(received.map((e) => [e.from_session_thread_id, e.from_agent_name, e.content[0].text])).toEqual([
      [researcher!.id, 'researcher', 'The sea is salty.'],
      [writer!.id, 'writer', 'Salt is the sea remembering.'],
      [researcher!.id, 'researcher', 'About 3.5% salt.'],
    ]);
    const results = list.filter((e) => e.type === 'agent.tool_result').map((e) => e.content[0].text);
    expect(results[0]).toBe(
      `Sent to researcher (thread ${researcher!.id}). Its report will arrive as a message when it finishes.`,
    );
    // Each delegate's own history: its input, its turns, its reports.
    const delegateTurn = [
      'agent.thread_message_received',
      'session.thread_status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.thread_status_idle',
      'agent.thread_message_sent',
    ];
    const researcherLog = await events(id, researcher!.id);
    expect(researcherLog.map((e) => e.type)).toEqual([
      'session.thread_created',
      ...delegateTurn,
      ...delegateTurn,
    ]);
    expect(researcherLog.every((e) => e.session_thread_id === researcher!.id)).toBe(true);
    expect((await events(id, writer!.id)).map((e) => e.type)).toEqual([
      'session.thread_created',
      ...delegateTurn,
    ]);
    // The follow-up continued the researcher's context: its second request carries the first exchange.
    const researcherRequests = stack.model.requests.filter(
      (r) => r.body.system === 'You research.' && userTexts(r.body).some((t) => t.includes('And how salty?')),
    );
    expect(researcherRequests).toHaveLength(1);
    expect(userTexts(researcherRequests[0]!.body)).toEqual([
      '<message from="lead">\nFind one sea fact.\n</message>',
      '<message from="lead">\nAnd how salty?\n</message>',
    ]);
    // The SSE streams show what the histories show: the Session's (the primary's view) and a delegate's.
    expect(await streamed(`/v1/sessions/${id}/events/stream`, list.length)).toEqual(list.map((e) => e.id));
    expect(
      await streamed(`/v1/sessions/${id}/threads/${researcher!.id}/stream`, researcherLog.length),
    ).toEqual(researcherLog.map((e) => e.id));
    await recordHistory(id, 'thread-coordinator-delegates');
    await recordHistory(threadWorkflowId(id, researcher!.id), 'thread-delegate-follow-up');
    // The coordinator was offered the platform tools; the delegates were not.
    const coordinatorTools = stack.model.requests
      .find((r) => r.body.system === 'You coordinate.')!
      .body.tools.map((t: any) => t.name);
    expect(coordinatorTools).toEqual(
      expect.arrayContaining(['list_agents', 'send_to_agent', 'consult_advisor']),
    );
    expect(stack.model.requests.find((r) => r.body.system === 'You research.')!.body.tools ?? []).toEqual([]);
    // Usage: every Thread's requests count against the Session's; a delegate's own usage is its own.
    const session = (await ws.get(`/v1/sessions/${id}`)).body;
    const requestsOf = (system: string) =>
      stack.model.requests.filter((r) => r.body.system === system).length;
    expect(researcher!.usage.input_tokens).toBe(10 * requestsOf('You research.'));
    expect(session.usage.input_tokens).toBe(
      10 *
        (requestsOf('You research.') +
          requestsOf('You write.') +
          stack.model.requests.filter(
            (r) =>
              r.body.system === 'You coordinate.' &&
              JSON.stringify(r.body).includes('Write about the sea with help.'),
          ).length),
    );
  });

  it('an Advisor consultation: a self-terminating Thread whose answer arrives on the primary', async () => {
    routes['You coordinate.'] = (body) => {
      const asked = (body.messages as any[]).some(
        (m) =>
          m.role === 'assistant' &&
          Array.isArray(m.content) &&
          m.content.some((b: any) => b.name === 'consult_advisor'),
      );
      if (lastIsToolResult(body)) return text('Asked.');
      if (!asked) return call('a1', 'consult_advisor', { question: 'Is 3.5% right?' });
      return text('The advisor agrees.');
    };
    routes['You are an advisor'] = () => text('Yes, about 3.5%.');
    const id = await start('Check with the advisor.');
    await until(async () =>
      (await events(id)).some(
        (e) => e.type === 'agent.message' && e.content[0].text === 'The advisor agrees.',
      ),
    );
    const all = await threads(id);
    expect(all.map((t) => [t.agent?.name ?? t.agent?.type ?? null, t.status])).toEqual([
      ['lead', expect.any(String)],
      ['advisor', 'terminated'],
    ]);
    const advisor = all[1]!;
    expect((await events(id, advisor.id)).map((e) => e.type)).toEqual([
      'session.thread_created',
      'agent.thread_message_received',
      'session.thread_status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.thread_status_idle',
      'agent.thread_message_sent',
      'session.thread_status_terminated',
    ]);
    const answer = (await events(id)).find((e) => e.type === 'agent.thread_message_received')!;
    expect(answer).toMatchObject({
      from_session_thread_id: advisor.id,
      from_agent_name: 'advisor',
      content: [{ type: 'text', text: 'Yes, about 3.5%.' }],
    });
    // The Advisor sees only the question: no tools, no transcript of the coordinator.
    const req = stack.model.requests.find((r) => String(r.body.system).startsWith('You are an advisor'))!;
    expect(req.body.tools ?? []).toEqual([]);
    expect(userTexts(req.body)).toEqual(['<message from="lead">\nIs 3.5% right?\n</message>']);
  });

  it('archive: 409 while a delegate runs, then archived once idle; a Fail terminates every Thread', async () => {
    routes['You coordinate.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent.')
        : sent(body) === 0
          ? call('d1', 'send_to_agent', { agent: 'writer', message: 'Slowly.' })
          : text('Thanks.');
    routes['You write.'] = () => text('Done slowly.', { delayMs: 4000 });
    // Its own Environment: the Work this Session makes is the only one its supervisor key claims.
    const ownEnv = (await ws.post('/v1/environments', { name: 'threads-fail' })).body.id as string;
    const supervisor = httpClient(
      stack.api.url,
      (await stack.api.issueKey('wrkspc_default', ownEnv)).api_key,
    );
    const id = await start('Delegate slowly.', ownEnv);
    await until(async () => (await threads(id)).some((t) => t.parent_thread_id && t.status === 'running'));
    const writer = (await threads(id))[1]!;
    const busy = await ws.post(`/v1/sessions/${id}/threads/${writer.id}/archive`, {});
    expect(busy.status).toBe(409);
    expect((await ws.get(`/v1/sessions/${id}`)).body.status).toBe('running');
    await until(async () => (await threads(id))[1]!.status === 'idle');
    const archived = await ws.post(`/v1/sessions/${id}/threads/${writer.id}/archive`, {});
    expect(archived.status).toBe(200);
    await until(async () => Boolean((await threads(id))[1]!.archived_at));
    // A worker's Fail ends the Session and every Thread that is still live.
    routes['You coordinate.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent.')
        : sent(body) <= 1
          ? call('d2', 'send_to_agent', { agent: 'researcher', message: 'Wait.' })
          : text('ok');
    routes['You research.'] = () => text('...', { delayMs: 60_000 });
    await ws.post(`/v1/sessions/${id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'Research now.' }] }],
    });
    await until(async () =>
      (await threads(id)).some((t) => t.agent?.name === 'researcher' && t.status === 'running'),
    );
    const polled = await supervisor.get(`/v1/environments/${ownEnv}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id });
    await supervisor.post(`/v1/environments/${ownEnv}/work/${polled.body.id}/ack`);
    const token = httpClient(stack.api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    const failed = await token.post(`/v1/environments/${ownEnv}/work/${polled.body.id}/fail`, {
      message: 'cannot set up the workspace',
    });
    expect(failed.status).toBe(200);
    await until(async () => (await ws.get(`/v1/sessions/${id}`)).body.status === 'terminated');
    const after = await threads(id);
    const researcher = after.find((t) => t.agent?.name === 'researcher')!;
    expect(researcher.status).toBe('terminated');
    expect(after.find((t) => t.id === writer.id)!.archived_at).not.toBeNull();
    const tail = (await events(id)).slice(-3).map((e) => [e.type, e.session_thread_id ?? null]);
    expect(tail).toEqual([
      ['session.thread_status_terminated', researcher.id],
      ['session.error', null],
      ['session.status_terminated', null],
    ]);
  });

  it("a delegate's always_ask call is answered from the primary stream, run by the worker, and reported", async () => {
    const checker = (
      await ws.post('/v1/agents', {
        name: 'checker',
        model: TEST_MODEL,
        system: 'You check.',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
          },
        ],
      })
    ).body.id;
    const lead = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: TEST_MODEL,
        system: 'You coordinate checks.',
        multiagent: { type: 'coordinator', agents: [checker] },
      })
    ).body.id;
    routes['You coordinate checks.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent.')
        : sent(body) === 0
          ? call('k1', 'send_to_agent', { agent: 'checker', message: 'Check the disk.' })
          : text('Checked.');
    routes['You check.'] = (body) => {
      const last = body.messages.at(-1);
      const result = Array.isArray(last.content) && last.content.find((b: any) => b.type === 'tool_result');
      return result
        ? text(`It says ${result.content[0].text}`)
        : call('b1', 'bash', { command: 'echo checked' });
    };
    const ownEnv = (await ws.post('/v1/environments', { name: 'threads-ask' })).body.id as string;
    const supervisor = httpClient(
      stack.api.url,
      (await stack.api.issueKey('wrkspc_default', ownEnv)).api_key,
    );
    const res = await ws.post('/v1/sessions', {
      agent: lead,
      environment_id: ownEnv,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Check it.' }] }],
    });
    const id = res.body.id as string;
    // The delegate's call that waits on a client is cross-posted to the primary, with its Thread's id.
    let asked: SessionEvent | undefined;
    await until(async () => {
      asked = (await events(id)).find((e) => e.type === 'agent.tool_use' && e.session_thread_id);
      return Boolean(asked) && (await threads(id))[1]?.status === 'idle';
    });
    const checkerThread = (await threads(id))[1]!;
    expect(asked).toMatchObject({
      name: 'bash',
      evaluated_permission: 'ask',
      session_thread_id: checkerThread.id,
    });
    const waiting = (await events(id, checkerThread.id)).at(-1)!;
    expect(waiting).toMatchObject({
      type: 'session.thread_status_idle',
      stop_reason: { type: 'requires_action', event_ids: [asked!.id] },
    });
    // An answer that names another Thread is refused and changes nothing; the right one lands on the call's Thread.
    const wrong = await ws.post(`/v1/sessions/${id}/events`, {
      events: [
        {
          type: 'user.tool_confirmation',
          tool_use_id: asked!.id,
          result: 'allow',
          session_thread_id: (await threads(id))[0]!.id,
        },
      ],
    });
    expect(wrong.status).toBe(400);
    const allowed = await ws.post(`/v1/sessions/${id}/events`, {
      events: [{ type: 'user.tool_confirmation', tool_use_id: asked!.id, result: 'allow' }],
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data[0].session_thread_id).toBe(checkerThread.id);
    // The confirmation wakes the delegate, whose turn then waits for the worker's result.
    await until(
      async () => (await events(id, checkerThread.id)).at(-1)?.type === 'session.thread_status_running',
    );
    // The worker claims the Session's Work and answers the call with the Thread's id.
    const polled = await supervisor.get(`/v1/environments/${ownEnv}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id });
    await supervisor.post(`/v1/environments/${ownEnv}/work/${polled.body.id}/ack`);
    const worker = httpClient(stack.api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    // The Work token sees every Thread's sandbox calls.
    expect(
      (await worker.get(`/v1/sessions/${id}/events?limit=1000`)).body.data.map((e: SessionEvent) => e.id),
    ).toContain(asked!.id);
    const answered = await worker.post(`/v1/sessions/${id}/events`, {
      events: [
        {
          type: 'user.tool_result',
          tool_use_id: asked!.id,
          content: [{ type: 'text', text: 'checked' }],
          session_thread_id: checkerThread.id,
        },
      ],
    });
    expect(answered.status).toBe(200);
    await until(async () =>
      (await events(id)).some((e) => e.type === 'agent.message' && e.content[0].text === 'Checked.'),
    );
    expect((await events(id, checkerThread.id)).map((e) => e.type)).toEqual([
      'session.thread_created',
      'agent.thread_message_received',
      'session.thread_status_running',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'session.thread_status_idle',
      'user.tool_confirmation',
      'session.thread_status_running',
      'user.tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.thread_status_idle',
      'agent.thread_message_sent',
    ]);
    const report = (await events(id)).find((e) => e.type === 'agent.thread_message_received')!;
    expect(report.content[0].text).toBe('It says checked');
    await worker.post(`/v1/environments/${ownEnv}/work/${polled.body.id}/stop`, { force: true });
  });

  it('a reached budget stops every Thread; raising it resumes each of them', async () => {
    const spender = async (name: string) =>
      (
        await ws.post('/v1/agents', {
          name,
          model: 'claude-sonnet-4-6',
          system: 'You spend.',
          tools: [
            {
              type: 'agent_toolset_20260401',
              configs: [{ name: 'bash', permission_policy: { type: 'deny' } }],
            },
          ],
        })
      ).body.id;
    const lead = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: 'claude-sonnet-4-6',
        system: 'You coordinate spending.',
        multiagent: { type: 'coordinator', agents: [await spender('alpha'), await spender('beta')] },
      })
    ).body.id;
    routes['You coordinate spending.'] = (body) => {
      if (lastIsToolResult(body)) return text('Sent.');
      if (sent(body) > 0) return text('Thanks.');
      return {
        content: [
          { type: 'tool_use', id: 's1', name: 'send_to_agent', input: { agent: 'alpha', message: 'Spend.' } },
          { type: 'tool_use', id: 's2', name: 'send_to_agent', input: { agent: 'beta', message: 'Spend.' } },
        ],
        stop_reason: 'tool_use',
      };
    };
    // One request of a delegate costs 6 cents (10,000 input + 2,000 output tokens at $3/$15 per million):
    // over the 3-cent cap on its own.
    routes['You spend.'] = (body) =>
      lastIsToolResult(body)
        ? text('Resumed.')
        : {
            ...call('x', 'bash', { command: 'true' }),
            usage: { input_tokens: 10_000, output_tokens: 2_000 },
            delayMs: 1000,
          };
    const res = await ws.post('/v1/sessions', {
      agent: lead,
      environment_id: envId,
      budget: { type: 'limit', max_list_cost: { amount: '3', currency: 'USD' } },
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Spend it.' }] }],
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    const lastIdle = async (threadId: string) =>
      (await events(id, threadId)).filter((e) => e.type === 'session.thread_status_idle').at(-1)?.stop_reason
        ?.type;
    await until(async () => {
      const list = await threads(id);
      if (list.length < 3) return false;
      return (
        (await lastIdle(list[1]!.id)) === 'budget_reached' &&
        (await lastIdle(list[2]!.id)) === 'budget_reached'
      );
    });
    const spenders = (await threads(id)).slice(1);
    const spent = stack.model.requests.filter((r) => r.body.system === 'You spend.').length;
    expect(spent).toBeGreaterThanOrEqual(1);
    expect(spent).toBeLessThanOrEqual(2); // at most one request past the cap per running Thread
    const session = (await ws.get(`/v1/sessions/${id}`)).body;
    expect(session.status).toBe('idle');
    // Every Thread's requests are in the Session's usage; each delegate's own usage is its own.
    const leadRequests = stack.model.requests.filter(
      (r) => r.body.system === 'You coordinate spending.',
    ).length;
    expect(session.usage.input_tokens).toBe(
      10 * leadRequests + spenders.reduce((n, t) => n + (t.usage?.input_tokens ?? 0), 0),
    );
    expect(spenders.reduce((n, t) => n + (t.usage?.input_tokens ?? 0), 0)).toBe(10_000 * spent);
    await new Promise((r) => setTimeout(r, 1500));
    expect(stack.model.requests.filter((r) => r.body.system === 'You spend.').length).toBe(spent);
    // Raising the budget resumes each paused delegate through its own workflow; both report.
    const raised = await ws.post(`/v1/sessions/${id}`, {
      budget: { type: 'limit', max_list_cost: { amount: '500', currency: 'USD' } },
    });
    expect(raised.status).toBe(200);
    await until(
      async () => (await events(id)).filter((e) => e.type === 'agent.thread_message_received').length === 2,
    );
    for (const t of spenders) expect(await lastIdle(t.id)).toBe('end_turn');
  });

  it('a Session-wide interrupt stops a running delegate, which reports nothing', async () => {
    routes['You coordinate.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent.')
        : sent(body) === 0
          ? call('i1', 'send_to_agent', { agent: 'writer', message: 'Take your time.' })
          : text('Thanks.');
    routes['You write.'] = () => text('Too late.', { delayMs: 60_000 });
    const before = stack.model.requests.filter((r) => r.body.system === 'You write.').length;
    const id = await start('Delegate and wait.');
    await until(
      async () =>
        stack.model.requests.filter((r) => r.body.system === 'You write.').length > before &&
        (await threads(id))[1]?.status === 'running',
    );
    const writer = (await threads(id))[1]!;
    const interrupted = await ws.post(`/v1/sessions/${id}/events`, { events: [{ type: 'user.interrupt' }] });
    expect(interrupted.status).toBe(200);
    await until(async () => (await threads(id))[1]!.status === 'idle');
    const log = await events(id, writer.id);
    expect(log.map((e) => e.type).slice(-4)).toEqual([
      'session.thread_status_running',
      'span.model_request_start',
      'span.model_request_end',
      'session.thread_status_idle',
    ]);
    expect(log.at(-2)).toMatchObject({ is_error: null, model_usage: null });
    expect(log.at(-1)).toMatchObject({
      type: 'session.thread_status_idle',
      stop_reason: { type: 'end_turn' },
    });
    expect(log.some((e) => e.type === 'agent.thread_message_sent')).toBe(false);
    expect((await events(id)).some((e) => e.type === 'agent.thread_message_received')).toBe(false);
    await until(async () => (await ws.get(`/v1/sessions/${id}`)).body.status === 'idle');
  });

  it('an archive asked while the orchestrator is dead is finished when it is back (the intent is durable)', async () => {
    routes['You coordinate.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent.')
        : sent(body) === 0
          ? call('r1', 'send_to_agent', { agent: 'researcher', message: 'Quick one.' })
          : text('Thanks.');
    routes['You research.'] = () => text('Quick answer.');
    const id = await start('One quick delegation.');
    await until(async () =>
      (await events(id)).some((e) => e.type === 'agent.message' && e.content[0].text === 'Thanks.'),
    );
    await until(async () => (await ws.get(`/v1/sessions/${id}`)).body.status === 'idle');
    const researcher = (await threads(id))[1]!;
    await stack.orchestrator.stop('SIGKILL');
    const asked = await ws.post(`/v1/sessions/${id}/threads/${researcher.id}/archive`, {});
    expect(asked.status).toBe(200);
    expect(asked.body.archived_at).toBeNull();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await threads(id))[1]!.archived_at).toBeNull();
    restarted = await startOrchestrator(stack.api.db.url, {
      taskQueue: stack.taskQueue,
      modelUrl: stack.model.url,
      env: { MANGO_MODEL_PROFILES: PROFILES },
    });
    await until(async () => Boolean((await threads(id))[1]!.archived_at), 60_000);
    // An archived Thread takes no more input: the next send_to_agent to the same Agent starts a new Thread.
    routes['You coordinate.'] = (body) =>
      lastIsToolResult(body)
        ? text('Sent again.')
        : sent(body) === 1
          ? call('r2', 'send_to_agent', { agent: 'researcher', message: 'Another.' })
          : text('Thanks again.');
    await ws.post(`/v1/sessions/${id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'Again.' }] }],
    });
    await until(async () => (await threads(id)).length === 3);
    const fresh = (await threads(id))[2]!;
    expect(fresh).toMatchObject({
      agent: expect.objectContaining({ name: 'researcher' }),
      archived_at: null,
    });
    expect((await events(id, researcher.id)).some((e) => e.content?.[0]?.text === 'Another.')).toBe(false);
  });

  it("a delegate's own transcript is compacted near its model's window, with its Thread's keys", async () => {
    const rememberer = (
      await ws.post('/v1/agents', {
        name: 'rememberer',
        model: 'small-window-model',
        system: 'You remember.',
      })
    ).body.id;
    const lead = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: TEST_MODEL,
        system: 'You coordinate memory.',
        multiagent: { type: 'coordinator', agents: [rememberer] },
      })
    ).body.id;
    routes['You coordinate memory.'] = (body) => {
      const n = sent(body);
      if (lastIsToolResult(body)) return text('Sent.');
      if (n < 2) return call(`m${n}`, 'send_to_agent', { agent: 'rememberer', message: `Remember ${n}.` });
      return text('Remembered.');
    };
    // The first reply measures 4,800 tokens: the delegate's next prompt reaches 80% of its window.
    routes['You remember.'] = (body) =>
      userTexts(body).some((t) => t.includes('Remember 1.'))
        ? text('Second noted.', { usage: { input_tokens: 60, output_tokens: 5 } })
        : text('First noted.', { usage: { input_tokens: 4_700, output_tokens: 100 } });
    routes['You compact conversations'] = () =>
      text('Summary: asked to remember 0.', { usage: { input_tokens: 300, output_tokens: 20 } });
    const res = await ws.post('/v1/sessions', {
      agent: lead,
      environment_id: envId,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Remember things.' }] }],
    });
    const id = res.body.id as string;
    await until(async () =>
      (await events(id)).some((e) => e.type === 'agent.message' && e.content[0].text === 'Remembered.'),
    );
    const thread = (await threads(id))[1]!;
    const log = await events(id, thread.id);
    const compacted = log.findIndex((e) => e.type === 'agent.thread_context_compacted');
    expect(compacted).toBeGreaterThan(0);
    expect(log.slice(compacted - 2, compacted + 2).map((e) => e.type)).toEqual([
      'agent.thread_message_received',
      'session.thread_status_running',
      'agent.thread_context_compacted',
      'span.model_request_start',
    ]);
    expect(log[compacted]!.session_thread_id).toBe(thread.id);
    // The primary was not compacted; the delegate's next request started from its summary.
    expect((await events(id)).some((e) => e.type === 'agent.thread_context_compacted')).toBe(false);
    const after = stack.model.requests.filter(
      (r) =>
        r.body.system === 'You remember.' && JSON.stringify(r.body).includes('Summary: asked to remember 0.'),
    );
    expect(after).toHaveLength(1);
    // The summarizing request counts on the delegate's usage too (4,700 + 300 + 60 input tokens).
    expect(thread.usage.input_tokens).toBe(5060);
  });
});
