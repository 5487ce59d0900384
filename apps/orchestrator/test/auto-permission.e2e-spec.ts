import { AUTO_JUDGE_SYSTEM } from '@mango/domain-agents';
import { decodeWorkSecret } from '@mango/feature-work';
import { ApiUnderTest, httpClient, HttpClient, ScriptedModelServer } from '@mango/testing';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack, untilEvents } from './support';

/**
 * The `auto` permission policy (docs/api-guide.md "The auto permission policy") over real processes: the
 * scripted model answers both the turn and the judgement request. Allow → the call runs (a raw-HTTP
 * worker posts its result); ask → `requires_action`; a failed or slow judgement → ask. The decision and
 * its reason are on the `agent.tool_use` event.
 */
describe('the auto permission policy (real API, orchestrator, Temporal, scripted model)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let agent: string;

  let stack: SessionStack;

  beforeAll(async () => {
    stack = await startSessionStack('autoperm', {
      orchestratorEnv: { MANGO_AUTO_PERMISSION_TIMEOUT_MS: '1500' },
    });
    ({ api, model, ws } = stack);
    agent = (
      await ws.post('/v1/agents', {
        name: 'judged',
        model: 'm',
        system: 'Keep the repository tidy. Never delete anything.',
        tools: [
          {
            type: 'agent_toolset_20260401',
            default_config: { permission_policy: { type: 'auto' } },
            configs: [
              { name: 'web_search', enabled: false },
              { name: 'web_fetch', enabled: false },
            ],
          },
        ],
      })
    ).body.id;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  const until = (id: string, predicate: Parameters<typeof untilEvents>[2]) => untilEvents(ws, id, predicate);
  const bash = (id: string, command: string) => ({
    content: [{ type: 'tool_use', id, name: 'bash', input: { command } }],
    stop_reason: 'tool_use',
  });
  const verdict = (decision: string, reason: string) => ({
    content: [{ type: 'text', text: JSON.stringify({ decision, reason }) }],
  });
  async function session() {
    const env = (await ws.post('/v1/environments', { name: `pool-${Date.now()}-${Math.random()}` })).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: env,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      })
    ).body.id as string;
    return { env: env as string, id: s };
  }

  it('allow: the judge is asked with the fixed prompt; the call is allowed with its reason and runs', async () => {
    const before = model.requests.length;
    model.script(
      bash('toolu_a', 'git status'),
      verdict('allow', 'Reading the status is within the task.'),
      (body) => ({
        content: [{ type: 'text', text: `saw ${body.messages.at(-1).content[0].content[0].text}` }],
      }),
    );
    const s = await session();
    const running = await until(s.id, (l) => l.some((e) => e.type === 'agent.tool_use'));
    const use = running.find((e) => e.type === 'agent.tool_use')!;
    expect(use).toMatchObject({
      name: 'bash',
      evaluated_permission: 'allow',
      evaluation: {
        type: 'auto',
        evaluated_permission: { type: 'allow' },
        reason: 'Reading the status is within the task.',
      },
    });
    // The judgement request: bounded, no tools, the fixed system prompt, the instructions and the call.
    const judge = model.requests[before + 1]!.body;
    expect(judge.max_tokens).toBe(256);
    expect(judge.tools).toBeUndefined();
    expect(judge.system).toBe(AUTO_JUDGE_SYSTEM);
    expect(judge.messages).toEqual([
      {
        role: 'user',
        content:
          '<agent_instructions>\nKeep the repository tidy. Never delete anything.\n</agent_instructions>\n<tool_call>\ntool: bash (sandbox tool)\ninput: {"command":"git status"}\n</tool_call>',
      },
    ]);
    // An allowed call goes to the worker (Session Work exists): a raw-HTTP worker answers it.
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', s.env)).api_key);
    const polled = await supervisor.get(`/v1/environments/${s.env}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: s.id });
    await supervisor.post(`/v1/environments/${s.env}/work/${polled.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(polled.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${s.env}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const posted = await worker.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'clean' }] }],
    });
    expect(posted.status).toBe(200);
    const done = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('saw clean');
    expect(done.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    await supervisor.post(`/v1/environments/${s.env}/work/${polled.body.id}/stop`, { force: true });
  }, 120_000);

  it('ask: the judged call waits for a confirmation, with the reason on the event', async () => {
    model.script(
      bash('toolu_b', 'rm -rf .'),
      verdict('ask', 'Deleting everything contradicts the instructions.'),
    );
    const s = await session();
    const idle = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    const use = idle.find((e) => e.type === 'agent.tool_use')!;
    expect(use).toMatchObject({
      evaluated_permission: 'ask',
      evaluation: {
        type: 'auto',
        evaluated_permission: { type: 'ask', reason_code: 'judged_ask' },
        reason: 'Deleting everything contradicts the instructions.',
      },
    });
    // The judgement's tokens count in the Session's usage with the reply's (10 + 5 each, scripted).
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.usage).toMatchObject({
      input_tokens: 20,
      output_tokens: 10,
    });
    expect(idle.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
    // The confirmation path is the usual one: a deny ends the call.
    model.script({ content: [{ type: 'text', text: 'Understood.' }] });
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny', deny_message: 'no' }],
    });
    const done = await until(s.id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(done.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
  }, 120_000);

  it.each<[string, object, string, RegExp]>([
    [
      'a failed judgement',
      { status: 500, error: 'judge down' },
      'judge_failed',
      /^the judgement request failed: /,
    ],
    [
      'a slow judgement',
      { ...{ content: [{ type: 'text', text: '{"decision":"allow","reason":"late"}' }] }, delayMs: 4000 },
      'judge_failed',
      /^the judgement did not finish within 1500 ms$/,
    ],
    [
      'an unparsable judgement',
      { content: [{ type: 'text', text: 'Sure, go ahead!' }] },
      'judge_unparsable',
      /^the judgement was not JSON$/,
    ],
  ])(
    '%s falls back to ask',
    async (_name, reply, code, reason) => {
      model.script(bash('toolu_c', 'make'), reply as never);
      const s = await session();
      const idle = await until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
      const use = idle.find((e) => e.type === 'agent.tool_use')!;
      expect(use.evaluated_permission).toBe('ask');
      expect(use.evaluation.evaluated_permission).toEqual({ type: 'ask', reason_code: code });
      expect(use.evaluation.reason).toMatch(reason);
      expect(idle.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
      // Exactly one judgement request was made for the call (no retry of the turn's model request).
      expect(idle.filter((e) => e.type === 'session.error')).toEqual([]);
    },
    120_000,
  );
});
