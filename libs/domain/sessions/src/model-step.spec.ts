import { addedListCostUsd, addUsage, stepOutcome, StepToolUse } from './model-step';

const use = (id: string, type: string, permission?: string): StepToolUse => ({
  id,
  type,
  body: permission ? { evaluated_permission: permission } : {},
});

describe('stepOutcome (what a model step asks of the workflow)', () => {
  it.each<[string, StepToolUse[], ReturnType<typeof stepOutcome>]>([
    ['no call ends the turn', [], { stopReason: 'end_turn' }],
    [
      'an allowed sandbox call runs',
      [use('a', 'agent.tool_use', 'allow')],
      { stopReason: 'tool_use', toolUseIds: ['a'] },
    ],
    [
      'allowed MCP calls are made by the orchestrator, beside sandbox runs',
      [use('a', 'agent.tool_use', 'allow'), use('m', 'agent.mcp_tool_use', 'allow')],
      { stopReason: 'tool_use', toolUseIds: ['a'], mcpToolUseIds: ['m'] },
    ],
    [
      'an asked call outranks allowed ones: the turn idles requires_action',
      [use('a', 'agent.tool_use', 'allow'), use('q', 'agent.tool_use', 'ask')],
      { stopReason: 'requires_action', eventIds: ['q'] },
    ],
    [
      'a custom tool always needs the application',
      [use('c', 'agent.custom_tool_use'), use('q', 'agent.mcp_tool_use', 'ask')],
      { stopReason: 'requires_action', eventIds: ['c', 'q'] },
    ],
    [
      'only denied calls go back to the model at once',
      [use('d', 'agent.tool_use', 'deny')],
      { stopReason: 'tool_use', toolUseIds: [] },
    ],
  ])('%s', (_name, uses, expected) => {
    expect(stepOutcome(uses)).toEqual(expected);
  });
});

describe('addUsage (cumulative usage and list cost)', () => {
  it('adds tokens and prices the total, rounding up to whole cents', () => {
    const before = { input_tokens: 1000, output_tokens: 100, list_cost: null, active_seconds: 2 };
    const after = addUsage('claude-sonnet-4-6', before, { input_tokens: 1500, output_tokens: 200 }, {});
    expect(after).toEqual({
      input_tokens: 2500,
      output_tokens: 300,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      active_seconds: 2,
      // 2,500 × $3/M + 300 × $15/M = $0.012 → 2 cents
      list_cost: { amount: '2', currency: 'USD' },
    });
    expect(addedListCostUsd(before, after)).toBeCloseTo(0.02, 5);
  });

  it('an unpriced model has no list cost and adds none', () => {
    const after = addUsage('m', {}, { input_tokens: 5, output_tokens: 5, cache_read_input_tokens: 3 }, {});
    expect(after.list_cost).toBeNull();
    expect(after.cache_read_input_tokens).toBe(3);
    expect(addedListCostUsd({}, after)).toBe(0);
  });

  it('counts the server tools the endpoint ran and prices web searches at 1 cent each', () => {
    const one = addUsage(
      'claude-sonnet-4-6',
      {},
      { input_tokens: 0, output_tokens: 0, server_tool_use: { web_search_requests: 2 } },
      {},
    );
    expect(one.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
    expect(one.list_cost).toEqual({ amount: '2', currency: 'USD' });
    const two = addUsage(
      'claude-sonnet-4-6',
      one,
      { input_tokens: 0, output_tokens: 0, server_tool_use: { web_fetch_requests: 3 } },
      {},
    );
    expect(two.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 3 });
    expect(two.list_cost).toEqual({ amount: '2', currency: 'USD' }); // fetches have no request price
    // A response without server tools keeps the counts; a Session that never ran one has no key.
    expect(
      addUsage('claude-sonnet-4-6', two, { input_tokens: 1, output_tokens: 1 }, {}).server_tool_use,
    ).toEqual({
      web_search_requests: 2,
      web_fetch_requests: 3,
    });
    expect('server_tool_use' in addUsage('m', {}, { input_tokens: 1, output_tokens: 1 }, {})).toBe(false);
  });

  it('operator prices apply', () => {
    const after = addUsage(
      'm',
      {},
      { input_tokens: 1_000_000, output_tokens: 0 },
      { m: { input: 2, output: 4 } },
    );
    expect(after.list_cost).toEqual({ amount: '200', currency: 'USD' });
  });
});
