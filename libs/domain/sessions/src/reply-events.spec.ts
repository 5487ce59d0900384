import { AGENT_TOOLSET_TYPE, type AgentDefinition, type AutoEvaluation } from '@mango/domain-agents';
import { MAX_TOKENS_CONTINUATIONS } from './model-profiles';
import { stepOutcome } from './model-step';
import {
  type CallAnswer,
  type ModelReply,
  planReplyEvents,
  type PlannedEvent,
  readReply,
  recordedStepOutcome,
  type ReplyBlock,
  replyOutcome,
  type ReplyPlan,
  stepEvent,
  stepKey,
  withAnswered,
} from './reply-events';

const agent: AgentDefinition = {
  name: 'a',
  description: null,
  system: null,
  model: { id: 'claude-sonnet-4-5' },
  tools: [
    {
      type: AGENT_TOOLSET_TYPE,
      default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
      configs: [
        { name: 'bash', type: 'bash', enabled: true, permission_policy: { type: 'always_allow' } },
        { name: 'write', type: 'write', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'edit', type: 'edit', enabled: true, permission_policy: { type: 'deny' } },
        { name: 'read', type: 'read', enabled: true, permission_policy: { type: 'auto' } },
      ],
    },
    { type: 'custom', name: 'lookup', description: 'd', input_schema: { type: 'object' } },
  ],
  mcp_servers: [],
  skills: [],
  multiagent: null,
  metadata: {},
};

const use = (name: string, id = `tu_${name}`): ReplyBlock => ({
  type: 'tool_use',
  id,
  name,
  input: { q: name },
});
const text = (t: string): ReplyBlock => ({ type: 'text', text: t });
const usage = { input_tokens: 10, output_tokens: 5 };
const allowJudged: AutoEvaluation = { type: 'auto', evaluated_permission: { type: 'allow' }, reason: 'safe' };
const askJudged: AutoEvaluation = {
  type: 'auto',
  evaluated_permission: { type: 'ask', reason_code: 'judged_ask' },
  reason: 'risky',
};
const mcpTool = {
  modelName: 'mcp__gh__issues',
  serverName: 'gh',
  toolName: 'issues',
  permission: 'allow' as const,
};

function plan(content: ReplyBlock[], over: Partial<ReplyPlan> = {}): PlannedEvent[] {
  return planReplyEvents({
    key: 'turn:1:step:0',
    reply: readReply({ content, stop_reason: 'end_turn' }, 0),
    usage,
    startId: 'sevt_start',
    ids: { message: 'sevt_msg', thinking: 'sevt_think', uses: ['sevt_u0', 'sevt_u1', 'sevt_u2'] },
    agent,
    mcpTools: [mcpTool],
    judged: new Map(),
    answered: new Map(),
    serverEvents: [],
    platformEvents: [],
    ...over,
  });
}

/** The call events of a plan: type, evaluated permission, runnable, evaluation. */
const calls = (events: PlannedEvent[]) =>
  events
    .filter((e) => e.idempotencyKey?.includes(':tool_use:'))
    .map((e) => [e.type, e.body.evaluated_permission, e.runnable, e.body.evaluation ? 'judged' : '-']);

describe('planReplyEvents: one event per call, by the kind of call', () => {
  it.each<[string, ReplyBlock, Partial<ReplyPlan>, unknown[]]>([
    [
      'a built-in tool the toolset allows runs on the Session Work',
      use('bash'),
      {},
      ['agent.tool_use', 'allow', true, '-'],
    ],
    [
      'a built-in tool the toolset asks for waits for a confirmation',
      use('write'),
      {},
      ['agent.tool_use', 'ask', false, '-'],
    ],
    [
      'a built-in tool the toolset denies is never run',
      use('edit'),
      {},
      ['agent.tool_use', 'deny', false, '-'],
    ],
    [
      'a tool the Agent does not enable is denied (fail closed)',
      use('invented'),
      {},
      ['agent.tool_use', 'deny', false, '-'],
    ],
    [
      'a built-in `auto` call takes its judgement',
      use('read'),
      { judged: new Map([[0, allowJudged]]) },
      ['agent.tool_use', 'allow', true, 'judged'],
    ],
    [
      'a custom tool is runnable for an operator worker and has no permission',
      use('lookup'),
      {},
      ['agent.custom_tool_use', undefined, true, '-'],
    ],
    [
      'an MCP call takes its tool permission',
      use('mcp__gh__issues'),
      {},
      ['agent.mcp_tool_use', 'allow', false, '-'],
    ],
    [
      'an MCP `auto` call takes its judgement over the tool permission',
      use('mcp__gh__issues'),
      { judged: new Map([[0, askJudged]]) },
      ['agent.mcp_tool_use', 'ask', false, 'judged'],
    ],
    [
      'a call answered within the step (platform call, Skill activation) is allowed and marked answered',
      use('list_agents'),
      { answered: new Map<number, CallAnswer>([[0, { text: 'roster', isError: false }]]) },
      ['agent.tool_use', 'allow', false, '-'],
    ],
  ])('%s', (_name, block, over, expected) => {
    expect(calls(plan([block], over))).toEqual([expected]);
  });

  it('an MCP call names its server and tool, and keeps the model-facing name internal', () => {
    const [call] = plan([use('mcp__gh__issues')]).filter((e) => e.type === 'agent.mcp_tool_use');
    expect(call!.body).toEqual({
      name: 'issues',
      mcp_server_name: 'gh',
      input: { q: 'mcp__gh__issues' },
      evaluated_permission: 'allow',
      _model_name: 'mcp__gh__issues',
    });
  });

  it('an answered call is followed by its result, under its pre-allocated id', () => {
    const events = plan([use('list_agents')], {
      answered: new Map<number, CallAnswer>([[0, { text: 'roster', isError: false }]]),
    });
    const call = events.find((e) => e.idempotencyKey === 'turn:1:step:0:tool_use:0')!;
    expect(call.id).toBe('sevt_u0');
    expect(call.body._answered).toBe(true);
    const result = events.find((e) => e.idempotencyKey === 'turn:1:step:0:tool_result:0')!;
    expect(result.body).toEqual({
      tool_use_id: 'sevt_u0',
      content: [{ type: 'text', text: 'roster' }],
      is_error: false,
    });
  });

  it('orders thinking, web tools, text, calls, results, platform events and the closing span', () => {
    const server = stepEvent('agent.tool_use', { name: 'web_search' }, 'turn:1:step:0:server_tool_use:1');
    const platform = stepEvent('agent.thread_message_sent', {}, 'turn:1:step:0:platform:2:sent');
    const events = plan(
      [{ type: 'thinking', thinking: 'hm', signature: 's' }, text('hi'), use('list_agents')],
      {
        serverEvents: [server],
        platformEvents: [platform],
        answered: new Map<number, CallAnswer>([[0, { text: 'r', isError: false }]]),
      },
    );
    expect(events.map((e) => e.type)).toEqual([
      'agent.thinking',
      'agent.tool_use',
      'agent.message',
      'agent.tool_use',
      'agent.tool_result',
      'agent.thread_message_sent',
      'span.model_request_end',
    ]);
    expect(events[0]).toMatchObject({ id: 'sevt_think', body: { _blocks: [{ type: 'thinking' }] } });
    expect(events[2]).toMatchObject({ id: 'sevt_msg', body: { content: [{ type: 'text', text: 'hi' }] } });
    expect(events.every((e) => e.processed)).toBe(true);
  });

  it('closes the step with its usage (absent cache counts are 0) and the start span it ends', () => {
    const end = plan([text('hi')]).at(-1)!;
    expect(end).toMatchObject({
      type: 'span.model_request_end',
      idempotencyKey: 'turn:1:step:0:model_end',
      body: {
        model_request_start_id: 'sevt_start',
        is_error: false,
        model_usage: {
          input_tokens: 10,
          output_tokens: 5,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    });
    expect(end.body).not.toHaveProperty('_stop_reason');
  });

  it("a delegate's events are its Thread's, except what platform calls wrote for other Threads", () => {
    const other = { ...stepEvent('agent.thread_message_received', {}, 'k'), sessionThreadId: 'sthr_other' };
    const mine = stepEvent('agent.thread_message_sent', {}, 'k2');
    const events = plan([text('hi')], { threadId: 'sthr_me', platformEvents: [other, mine] });
    expect(events.map((e) => e.sessionThreadId)).toEqual(['sthr_me', 'sthr_other', undefined, 'sthr_me']);
  });

  it("the primary's events carry no Thread", () => {
    expect(plan([text('hi'), use('bash')]).every((e) => e.sessionThreadId === undefined)).toBe(true);
  });
});

describe('readReply: a cut reply (max_tokens)', () => {
  const reply = (content: ReplyBlock[], stop: string): Pick<ModelReply, 'content' | 'stop_reason'> => ({
    content,
    stop_reason: stop,
  });

  it.each<[string, ReplyBlock[], string, number, { cut: boolean; uses: number; continues: boolean }]>([
    [
      'a whole reply is read as it is',
      [text('a'), use('bash')],
      'tool_use',
      0,
      { cut: false, uses: 1, continues: false },
    ],
    [
      'a cut reply drops the call it was still writing and continues',
      [text('a'), use('bash')],
      'max_tokens',
      0,
      { cut: true, uses: 0, continues: true },
    ],
    [
      'a cut reply with a complete call before its text runs the call',
      [use('bash'), text('a')],
      'max_tokens',
      0,
      { cut: true, uses: 1, continues: false },
    ],
    [
      'a cut reply past the continuations of a turn does not continue',
      [text('a')],
      'max_tokens',
      MAX_TOKENS_CONTINUATIONS,
      { cut: true, uses: 0, continues: false },
    ],
  ])('%s', (_name, content, stop, continuations, expected) => {
    const read = readReply(reply(content, stop), continuations);
    expect({ cut: read.cut, uses: read.uses.length, continues: read.continues }).toEqual(expected);
    expect(read.text).toEqual([{ type: 'text', text: 'a' }]);
  });

  it('marks the closing span of a cut reply with `_stop_reason`', () => {
    const events = planReplyEvents({
      key: 'k',
      reply: readReply(reply([text('a')], 'max_tokens'), 0),
      usage,
      startId: 's',
      ids: { message: 'm', thinking: 't', uses: [] },
      agent,
      mcpTools: [],
      judged: new Map(),
      answered: new Map(),
      serverEvents: [],
      platformEvents: [],
    });
    expect(events.at(-1)!.body._stop_reason).toBe('max_tokens');
  });

  it('keeps thinking blocks exactly as returned', () => {
    const blocks: ReplyBlock[] = [
      { type: 'thinking', thinking: 'x', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
    ];
    expect(readReply(reply([...blocks, text('a')], 'end_turn'), 0).thinking).toEqual(blocks);
  });
});

describe('replyOutcome: what a replied step asks of the workflow', () => {
  const end = { stopReason: 'end_turn' as const };
  const run = { stopReason: 'tool_use' as const, toolUseIds: ['a'] };
  const again = { stopReason: 'tool_use', toolUseIds: [], answered: [] };
  it.each<[string, Parameters<typeof replyOutcome>[0], unknown]>([
    [
      'a reply with no call ends the turn',
      { decided: end, fresh: true, continues: false, stopReason: 'end_turn' },
      end,
    ],
    [
      'calls just recorded have no result yet',
      { decided: run, fresh: true, continues: false, stopReason: 'tool_use' },
      { ...run, answered: [] },
    ],
    [
      "an earlier attempt's calls may have results (the workflow looks)",
      { decided: run, fresh: false, continues: false, stopReason: 'tool_use' },
      run,
    ],
    [
      'a continued cut reply asks the model again',
      { decided: end, fresh: true, continues: true, stopReason: 'max_tokens' },
      again,
    ],
    [
      '`pause_turn` with no call asks the model again',
      { decided: end, fresh: true, continues: false, stopReason: 'pause_turn' },
      again,
    ],
    [
      '`pause_turn` with calls waits for them',
      { decided: run, fresh: true, continues: false, stopReason: 'pause_turn' },
      { ...run, answered: [] },
    ],
  ])('%s', (_name, input, expected) => {
    expect(replyOutcome(input)).toEqual(expected);
  });

  it('a whole reply decides like stepOutcome over its recorded calls', () => {
    const uses = [{ id: 'q', type: 'agent.tool_use', body: { evaluated_permission: 'ask' } }];
    expect(
      replyOutcome({ decided: stepOutcome(uses), fresh: true, continues: false, stopReason: 'tool_use' }),
    ).toEqual({
      stopReason: 'requires_action',
      eventIds: ['q'],
    });
  });
});

describe('recordedStepOutcome: a retried step answers as the first time', () => {
  const ev = (seq: number, key: string, body: Record<string, unknown> = {}, type = 'agent.tool_use') => ({
    id: `e${seq}`,
    seq,
    type,
    body,
    idempotencyKey: key,
  });
  const ref = { turn: 2, step: 1 };

  it('takes the decision over the calls it recorded', () => {
    const events = [
      ev(1, 'turn:2:step:1:tool_use:0', { evaluated_permission: 'allow' }),
      ev(2, 'turn:2:step:1:model_end', {}, 'span.model_request_end'),
    ];
    expect(recordedStepOutcome(events, ref)).toEqual({ stopReason: 'tool_use', toolUseIds: ['e1'] });
  });

  it('continues a recorded cut reply while the turn has continuations left', () => {
    const events = [
      ev(1, 'turn:2:step:1:model_end', { _stop_reason: 'max_tokens' }, 'span.model_request_end'),
    ];
    expect(recordedStepOutcome(events, ref)).toEqual({ stopReason: 'tool_use', toolUseIds: [] });
  });

  it('ends the turn once the cut replies before it used the continuations up', () => {
    const before = Array.from({ length: MAX_TOKENS_CONTINUATIONS }, (_, i) =>
      ev(i + 1, `turn:2:step:0:x${i}`, { _stop_reason: 'max_tokens' }, 'span.model_request_end'),
    );
    const events = [
      ...before,
      ev(99, 'turn:2:step:1:model_end', { _stop_reason: 'max_tokens' }, 'span.model_request_end'),
    ];
    expect(recordedStepOutcome(events, ref)).toEqual({ stopReason: 'end_turn' });
  });

  it("reads a delegate's step under its Thread's keys", () => {
    const events = [ev(1, 'thread:sthr_1:turn:2:step:1:tool_use:0', { evaluated_permission: 'allow' })];
    expect(recordedStepOutcome(events, { ...ref, threadId: 'sthr_1' })).toEqual({
      stopReason: 'tool_use',
      toolUseIds: ['e1'],
    });
    expect(stepKey({ ...ref, threadId: 'sthr_1' })).toBe('thread:sthr_1:turn:2:step:1');
  });
});

describe('withAnswered', () => {
  it('says which calls the log already answers, once each', () => {
    const log = [{ toolUseId: 'a' }, { toolUseId: 'a' }, { toolUseId: 'z' }, { toolUseId: null }];
    expect(withAnswered({ stopReason: 'tool_use', toolUseIds: ['a', 'b'] }, log)).toEqual({
      stopReason: 'tool_use',
      toolUseIds: ['a', 'b'],
      answered: ['a'],
    });
  });

  it('leaves other outcomes as they are', () => {
    expect(withAnswered({ stopReason: 'end_turn' }, [{ toolUseId: 'a' }])).toEqual({
      stopReason: 'end_turn',
    });
  });
});
