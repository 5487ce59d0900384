import {
  ConsoleEvent,
  formatMoney,
  groupByModelRequest,
  keyHint,
  lanes,
  liveStatus,
  mergeEvents,
  pendingApprovals,
  PRIMARY,
  usageView,
} from './transcript';

const ev = (id: string, type: string, extra: Record<string, unknown> = {}): ConsoleEvent => ({
  id,
  type,
  ...extra,
});

describe('groupByModelRequest', () => {
  it.each([
    {
      name: 'a user message, one model request with a message and a tool use, then the tool result',
      events: [
        ev('1', 'user.message'),
        ev('2', 'span.model_request_start'),
        ev('3', 'agent.message'),
        ev('4', 'agent.tool_use'),
        ev('5', 'span.model_request_end', { model_request_start_id: '2' }),
        ev('6', 'user.tool_result', { tool_use_id: '4' }),
      ],
      shape: ['event:1', 'model_request:2[3,4]/5', 'event:6'],
    },
    {
      name: 'a request still open (live) collects the agent events so far',
      events: [ev('1', 'span.model_request_start'), ev('2', 'agent.thinking'), ev('3', 'agent.message')],
      shape: ['model_request:1[2,3]/-'],
    },
    {
      name: 'an end without its start is shown as an event',
      events: [ev('9', 'span.model_request_end', { model_request_start_id: 'x' })],
      shape: ['event:9'],
    },
    {
      name: 'status events inside a request stay outside it',
      events: [
        ev('1', 'span.model_request_start'),
        ev('2', 'session.status_running'),
        ev('3', 'agent.message'),
        ev('4', 'span.model_request_end', { model_request_start_id: '1' }),
      ],
      shape: ['model_request:1[3]/4', 'event:2'],
    },
  ])('$name', ({ events, shape }) => {
    const blocks = groupByModelRequest(events);
    expect(
      blocks.map((b) =>
        b.kind === 'event'
          ? `event:${b.id}`
          : `model_request:${b.id}[${b.events.map((e) => e.id).join(',')}]/${b.end?.id ?? '-'}`,
      ),
    ).toEqual(shape);
  });
});

describe('pendingApprovals and liveStatus', () => {
  const ask = ev('t1', 'agent.tool_use', { evaluated_permission: 'ask', name: 'bash' });
  it.each([
    {
      name: 'an ask tool use with no answer is pending',
      events: [ask],
      pending: ['t1'],
      status: 'awaiting approval',
    },
    {
      name: 'a confirmation answers it',
      events: [ask, ev('c', 'user.tool_confirmation', { tool_use_id: 't1', result: 'allow' })],
      pending: [],
      status: 'running',
    },
    {
      name: 'an allowed tool use is never pending',
      events: [ev('t2', 'agent.tool_use', { evaluated_permission: 'allow' })],
      pending: [],
      status: 'running',
    },
    {
      name: 'an interrupt clears it',
      events: [ask, ev('i', 'user.interrupt')],
      pending: [],
      status: 'running',
    },
    {
      name: 'a relayed child call is pending too',
      events: [
        ev('t3', 'agent.mcp_tool_use', { evaluated_permission: 'ask', session_thread_id: 'sthr_child' }),
      ],
      pending: ['t3'],
      status: 'awaiting approval',
    },
    {
      name: 'idle after the answer',
      events: [
        ask,
        ev('c', 'user.tool_confirmation', { tool_use_id: 't1', result: 'deny' }),
        ev('s', 'session.status_idle'),
      ],
      pending: [],
      status: 'idle',
    },
    {
      name: 'terminated wins',
      events: [ask, ev('x', 'session.status_terminated')],
      pending: [],
      status: 'terminated',
    },
  ])('$name', ({ events, pending, status }) => {
    expect(pendingApprovals(events).map((e) => e.id)).toEqual(pending);
    expect(liveStatus('running', events)).toBe(status);
  });
});

describe('lanes', () => {
  it('puts the primary lane first and child Threads in order of appearance', () => {
    const events = [
      ev('1', 'user.message'),
      ev('2', 'agent.message', { session_thread_id: 'sthr_b' }),
      ev('3', 'agent.message', { session_thread_id: 'sthr_p' }),
      ev('4', 'agent.message', { session_thread_id: 'sthr_a' }),
    ];
    expect(lanes(events, 'sthr_p')).toEqual([PRIMARY, 'sthr_b', 'sthr_a']);
  });
});

describe('usageView', () => {
  it.each([
    {
      name: 'no budget',
      usage: { input_tokens: 10, output_tokens: 5 },
      budget: null,
      events: [],
      out: { inputTokens: 10, outputTokens: 5, cost: null, budget: null, fraction: null },
    },
    {
      name: 'cost against budget, cache tokens counted as input',
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 2,
        output_tokens: 1,
        list_cost: { amount: '25', currency: 'USD' },
      },
      budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } },
      events: [],
      out: { inputTokens: 12, outputTokens: 1, fraction: 0.25 },
    },
    {
      name: "tokens are the sum of the model requests in the log (live), the cost stays the Session's",
      usage: { input_tokens: 1, output_tokens: 1, list_cost: { amount: '3', currency: 'USD' } },
      budget: null,
      events: [
        ev('a', 'span.model_request_end', { model_usage: { input_tokens: 100, output_tokens: 10 } }),
        ev('b', 'span.model_request_end', { model_usage: null, is_error: true }),
        ev('c', 'span.model_request_end', {
          model_usage: { input_tokens: 5, cache_read_input_tokens: 5, output_tokens: 1 },
        }),
      ],
      out: { inputTokens: 110, outputTokens: 11, cost: { amount: '3', currency: 'USD' }, fraction: null },
    },
    {
      name: 'a later session.usage event wins',
      usage: { input_tokens: 1 },
      budget: null,
      events: [
        ev('u', 'session.usage', {
          usage: { input_tokens: 7, list_cost: { amount: '50', currency: 'USD' } },
          budget: { max_list_cost: { amount: '50', currency: 'USD' } },
        }),
      ],
      out: { inputTokens: 7, fraction: 1 },
    },
  ])('$name', ({ usage, budget, events, out }) => {
    expect(usageView(usage, budget, events)).toMatchObject(out);
  });

  it.each([
    [{ amount: '2500', currency: 'USD' }, '$25.00'],
    [{ amount: '7', currency: 'USD' }, '$0.07'],
    [null, '—'],
  ])('formatMoney(%j) = %s', (m, text) => expect(formatMoney(m)).toBe(text));
});

describe('keyHint and mergeEvents', () => {
  it('shows a key by its prefix and last four characters only', () => {
    const key = 'mango_ak_01SECRETSECRETSECRETabcd';
    expect(keyHint(key)).toBe('mango_ak_…abcd');
    expect(keyHint(key)).not.toContain('SECRET');
  });

  it('merges streamed events once each', () => {
    const merged = mergeEvents([ev('1', 'a'), ev('2', 'b')], [ev('2', 'b'), ev('3', 'c')]);
    expect(merged.map((e) => e.id)).toEqual(['1', '2', '3']);
  });
});
