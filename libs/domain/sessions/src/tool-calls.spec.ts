import { callStates, DENIED_BY_POLICY_MESSAGE, LogEvent, openCalls } from './tool-calls';
import { compactionPlan, transcript } from './transcript';

let seq = 0;
const ev = (type: string, body: Record<string, unknown> = {}, extra: Partial<LogEvent> = {}): LogEvent => ({
  id: `sevt_${++seq}`,
  seq,
  type,
  body,
  ...extra,
});
const message = (text: string) => ev('user.message', { content: [{ type: 'text', text }] });
const use = (permission: 'allow' | 'ask' | 'deny', name = 'bash') =>
  ev('agent.tool_use', { name, input: { command: 'ls' }, evaluated_permission: permission });
const result = (callId: string, text = 'ok') =>
  ev(
    'user.tool_result',
    { tool_use_id: callId, content: [{ type: 'text', text }], is_error: false },
    { toolUseId: callId },
  );
const idle = (type: string) => ev('session.status_idle', { stop_reason: { type } });

describe('tool calls in the log', () => {
  it('an allowed call waits for the worker until its result arrives', () => {
    const call = use('allow');
    expect(openCalls([message('hi'), call])).toEqual({ stopReason: 'tool_use', toolUseIds: [call.id] });
    expect(openCalls([message('hi'), call, result(call.id)])).toBeUndefined();
  });

  it('an ask call needs the client first; allow makes it wait for the worker; deny answers it', () => {
    const call = use('ask');
    expect(openCalls([call])).toEqual({ stopReason: 'requires_action', eventIds: [call.id] });
    const allow = ev('user.tool_confirmation', { tool_use_id: call.id, result: 'allow' });
    expect(openCalls([call, allow])).toEqual({ stopReason: 'tool_use', toolUseIds: [call.id] });
    const deny = ev('user.tool_confirmation', { tool_use_id: call.id, result: 'deny' });
    expect(openCalls([call, deny])).toBeUndefined();
  });

  it('a denied call and a custom tool', () => {
    const denied = use('deny');
    const custom = ev('agent.custom_tool_use', { name: 'lookup', input: {} });
    expect(openCalls([denied])).toBeUndefined();
    expect(openCalls([denied, custom])).toEqual({ stopReason: 'requires_action', eventIds: [custom.id] });
    const answer = ev(
      'user.custom_tool_result',
      { custom_tool_use_id: custom.id, content: [] },
      { toolUseId: custom.id },
    );
    expect(openCalls([denied, custom, answer])).toBeUndefined();
  });

  it.each([
    ['an interrupt', () => ev('user.interrupt')],
    ['an end_turn idle', () => idle('end_turn')],
    ['a retries_exhausted idle', () => idle('retries_exhausted')],
    ['a budget_reached idle', () => idle('budget_reached')],
  ])('%s closes every open call', (_name, closer) => {
    const a = use('allow');
    const b = use('ask');
    const log = [message('go'), a, b, closer()];
    expect(openCalls(log)).toBeUndefined();
    expect([...callStates(log).closed]).toEqual([a.id, b.id]);
  });

  it('a requires_action idle leaves its calls open', () => {
    const b = use('ask');
    expect(openCalls([b, idle('requires_action')])).toEqual({
      stopReason: 'requires_action',
      eventIds: [b.id],
    });
  });

  it('an answered call is not closed by a later interrupt', () => {
    const a = use('allow');
    const log = [a, result(a.id), ev('user.interrupt')];
    expect(callStates(log).closed.size).toBe(0);
    expect(callStates(log).answered.has(a.id)).toBe(true);
  });
});

describe('the model transcript', () => {
  it('pairs every tool_use with a result: real, denied, or interrupted', () => {
    const ran = use('allow');
    const denied = use('deny');
    const cut = use('allow');
    const log = [
      message('one'),
      ev('agent.message', { content: [{ type: 'text', text: 'running' }] }),
      ran,
      denied,
      result(ran.id, 'files'),
      cut,
      ev('user.interrupt'),
      idle('end_turn'),
      result(cut.id, 'too late'),
      message('two'),
    ];
    expect(transcript(log)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'running' },
          { type: 'tool_use', id: ran.id, name: 'bash', input: { command: 'ls' } },
          { type: 'tool_use', id: denied.id, name: 'bash', input: { command: 'ls' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: denied.id,
            content: 'Permission to use this tool was denied by policy.',
            is_error: true,
          },
          {
            type: 'tool_result',
            tool_use_id: ran.id,
            content: [{ type: 'text', text: 'files' }],
            is_error: false,
          },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: cut.id, name: 'bash', input: { command: 'ls' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: cut.id,
            content: 'Tool execution was interrupted before completion. Please retry.',
            is_error: true,
          },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  it('a user deny carries its message; documents become tagged text', () => {
    const call = use('ask');
    const log = [
      ev('user.message', {
        content: [
          {
            type: 'document',
            title: 'notes',
            source: { type: 'text', media_type: 'text/plain', data: 'abc' },
          },
        ],
      }),
      call,
      ev('user.tool_confirmation', { tool_use_id: call.id, result: 'deny', deny_message: 'not now' }),
    ];
    const [first, , third] = transcript(log);
    expect(first!.content).toEqual([{ type: 'text', text: '<document title="notes">\nabc\n</document>' }]);
    expect(third!.content).toEqual([
      { type: 'tool_result', tool_use_id: call.id, content: 'not now', is_error: true },
    ]);
  });

  it('a message sent during a turn joins the transcript after that turn, as the next turn input', () => {
    const log = [
      message('m1'),
      ev('session.status_running'),
      ev('span.model_request_start'),
      message('m2 (sent mid-turn)'),
      ev('agent.message', { content: [{ type: 'text', text: 'r1' }] }),
      ev('span.model_request_end'),
      idle('end_turn'),
      ev('session.status_running'),
    ];
    expect(transcript(log)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'm1' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'r1' }] },
      { role: 'user', content: [{ type: 'text', text: 'm2 (sent mid-turn)' }] },
    ]);
    // While the turn still runs, its own next model call does not see the queued message.
    expect(transcript(log.slice(0, 6))).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'm1' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'r1' }] },
    ]);
  });
});

describe('context compaction', () => {
  const end = (input: number) =>
    ev('span.model_request_end', {
      model_usage: {
        input_tokens: input,
        output_tokens: 5,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  const turn = (text: string, input: number, stop = 'end_turn') => [
    message(text),
    ev('session.status_running'),
    ev('agent.message', { content: [{ type: 'text', text: `re ${text}` }] }),
    end(input),
    idle(stop),
  ];

  it('plans a compaction of every completed turn once the last prompt reached the threshold', () => {
    const log = [...turn('a', 100), ...turn('b', 900)];
    expect(compactionPlan(log, 1000)).toBeUndefined();
    expect(compactionPlan(log, 900)).toEqual({ throughSeq: Number(log.at(-1)!.seq) });
  });

  it('never cuts a turn that left a call open, and does not repeat itself', () => {
    expect(compactionPlan([...turn('a', 5000, 'requires_action')], 10)).toBeUndefined();
    const log = [...turn('a', 5000)];
    const through = Number(log.at(-1)!.seq);
    const compacted = ev('agent.thread_context_compacted', { _summary: 'A said a.', _through_seq: through });
    expect(compactionPlan([...log, compacted], 10)).toBeUndefined();
    // A later large prompt after the compaction plans the next one, from the new turns.
    const next = [...log, compacted, ...turn('b', 5000)];
    expect(compactionPlan(next, 10)).toEqual({ throughSeq: Number(next.at(-1)!.seq) });
  });

  it('the transcript starts from the summary and keeps what came after the covered events', () => {
    const log = [...turn('a', 5000)];
    const through = Number(log.at(-1)!.seq);
    const pending = message('b');
    const compacted = ev('agent.thread_context_compacted', { _summary: 'A said a.', _through_seq: through });
    const messages = transcript([...log, pending, ev('session.status_running'), compacted]);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.role).toBe('user');
    expect(messages[0]!.content).toEqual([
      { type: 'text', text: expect.stringContaining('A said a.') },
      { type: 'text', text: 'b' },
    ]);
  });
});

describe('MCP calls in the log', () => {
  const at = (seq: number, type: string, body: Record<string, unknown> = {}, id = `e${seq}`): LogEvent => ({
    id,
    seq,
    type,
    body,
  });
  const use = (seq: number, permission: string) =>
    at(seq, 'agent.mcp_tool_use', {
      name: 'echo',
      mcp_server_name: 'tickets',
      input: {},
      evaluated_permission: permission,
      _model_name: 'mcp__tickets__echo',
    });

  it('an allowed MCP call is for the orchestrator, not the worker, until its agent.mcp_tool_result', () => {
    expect(openCalls([at(1, 'user.message'), use(2, 'allow')])).toEqual({
      stopReason: 'tool_use',
      toolUseIds: [],
      mcpToolUseIds: ['e2'],
    });
    expect(
      openCalls([use(2, 'allow'), at(3, 'agent.mcp_tool_result', { mcp_tool_use_id: 'e2', content: [] })]),
    ).toBeUndefined();
  });

  it('an asked MCP call needs action, then runs after an allow; deny and a denied confirmation close it', () => {
    expect(openCalls([use(2, 'ask')])).toEqual({ stopReason: 'requires_action', eventIds: ['e2'] });
    expect(
      openCalls([use(2, 'ask'), at(3, 'user.tool_confirmation', { tool_use_id: 'e2', result: 'allow' })]),
    ).toEqual({
      stopReason: 'tool_use',
      toolUseIds: [],
      mcpToolUseIds: ['e2'],
    });
    expect(
      openCalls([use(2, 'ask'), at(3, 'user.tool_confirmation', { tool_use_id: 'e2', result: 'deny' })]),
    ).toBeUndefined();
    expect(openCalls([use(2, 'deny')])).toBeUndefined();
  });

  it('the transcript shows the model name and the result, and a denied call as denied', () => {
    const t = transcript([
      at(1, 'user.message', { content: [{ type: 'text', text: 'hi' }] }),
      at(2, 'session.status_running'),
      use(3, 'allow'),
      at(4, 'agent.mcp_tool_result', {
        mcp_tool_use_id: 'e3',
        content: [{ type: 'text', text: 'echo: hi' }],
        is_error: false,
      }),
      use(5, 'deny'),
    ]);
    expect(t).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'e3', name: 'mcp__tickets__echo', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'e3',
            content: [{ type: 'text', text: 'echo: hi' }],
            is_error: false,
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'e5', name: 'mcp__tickets__echo', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'e5', content: DENIED_BY_POLICY_MESSAGE, is_error: true },
        ],
      },
    ]);
  });
});
