import { decodeWorkSecret } from '@mango/feature-work';
import { httpClient, type HttpClient, type ScriptedReply } from '@mango/testing';
import {
  type SessionEvent,
  type SessionStack,
  STACK_TIMEOUT_MS,
  startSessionStack,
  TEST_MODEL,
} from './support';

/**
 * Multi-agent Threads (ADR 0017, docs/api-guide.md "Multi-agent Threads") over real processes: apps/api,
 * apps/orchestrator on Temporal and PostgreSQL, and the scripted Messages API answering the coordinator,
 * its delegates and the Advisor by their system prompts.
 */
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
    stack = await startSessionStack('threads', { environment: true });
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

  afterAll(() => stack?.close());

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
});
