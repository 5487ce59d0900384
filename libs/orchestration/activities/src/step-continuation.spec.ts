import { mayContinue, resultsState, type WaitLogEvent } from './step-continuation';

describe('mayContinue (the in-activity continuation, ADR 0019)', () => {
  const room = { ran: 1, maxSteps: 50, waitMs: 1500, elapsedMs: 0, timeoutMs: 600_000 };
  const tools = { stopReason: 'tool_use' as const, toolUseIds: ['a'], answered: [] };

  it('continues after sandbox tool calls while steps, the window and the activity time allow', () => {
    expect(mayContinue(tools, room)).toBe(true);
    // A step of only answered or denied calls (or a continuation) continues at once too.
    expect(mayContinue({ stopReason: 'tool_use', toolUseIds: [] }, room)).toBe(true);
  });

  it.each([
    ['the turn ended', { stopReason: 'end_turn' as const }, room],
    ['an action is needed', { stopReason: 'requires_action' as const, eventIds: ['e'] }, room],
    ['the budget gate closed', { stopReason: 'budget_reached' as const }, room],
    ['MCP calls are for the workflow to make', { ...tools, mcpToolUseIds: ['m'] }, room],
    ['the wait is off (0)', tools, { ...room, waitMs: 0 }],
    ['the turn has no step left', tools, { ...room, ran: 50 }],
    ['the workflow asked for one step (a history from before)', tools, { ...room, maxSteps: 1 }],
    ['the activity used a quarter of its start-to-close timeout', tools, { ...room, elapsedMs: 150_001 }],
  ])('returns to the workflow when %s', (_, outcome, o) => {
    expect(mayContinue(outcome, o)).toBe(false);
  });
});

describe('resultsState', () => {
  let seq = 0;
  const ev = (type: string, extra: Partial<WaitLogEvent> = {}): WaitLogEvent => ({
    type,
    seq: String(++seq),
    body: {},
    ...extra,
  });
  const since = ['turn:2:running', 'turn:2:step:1:model_start'];
  const previousTurn = [
    ev('user.message'),
    ev('session.status_running', { idempotencyKey: 'turn:1:running' }),
    ev('user.interrupt'),
    ev('session.status_idle', { body: { stop_reason: { type: 'end_turn' } } }),
  ];
  const turn = [
    ev('user.message'),
    ev('session.status_running', { idempotencyKey: 'turn:2:running' }),
    ev('span.model_request_start', { idempotencyKey: 'turn:2:step:1:model_start' }),
    ev('agent.tool_use', { idempotencyKey: 'turn:2:step:1:tool_use:0' }),
    ev('agent.tool_use', { idempotencyKey: 'turn:2:step:1:tool_use:1' }),
    ev('span.model_request_end', { idempotencyKey: 'turn:2:step:1:model_end' }),
  ];

  it('says which calls have their result, in the order asked; an earlier turn’s interrupt does not stop it', () => {
    const log = [...previousTurn, ...turn, ev('user.tool_result', { toolUseId: 'b' })];
    expect(resultsState(log, ['a', 'b'], since)).toEqual({ answered: ['b'], stopped: false });
    const all = [...log, ev('user.message'), ev('user.tool_result', { toolUseId: 'a' })];
    expect(resultsState(all, ['a', 'b'], since)).toEqual({ answered: ['a', 'b'], stopped: false });
  });

  it('an interrupt after the turn began stops the continuation, answered or not', () => {
    const log = [...previousTurn, ...turn, ev('user.tool_result', { toolUseId: 'a' }), ev('user.interrupt')];
    expect(resultsState(log, ['a'], since)).toEqual({ answered: ['a'], stopped: true });
  });

  it('an idle after the turn began stops it (a requires_action idle does not close calls)', () => {
    const idle = (type: string) => ev('session.status_idle', { body: { stop_reason: { type } } });
    expect(resultsState([...turn, idle('end_turn')], ['a'], since).stopped).toBe(true);
    expect(resultsState([...turn, idle('requires_action')], ['a'], since).stopped).toBe(false);
  });

  it("without the turn's running key it counts from the step's start key", () => {
    const log = [...previousTurn, ...turn.filter((e) => e.idempotencyKey !== 'turn:2:running')];
    expect(resultsState(log, [], since)).toEqual({ answered: [], stopped: false });
    expect(resultsState([...log, ev('user.interrupt')], [], since).stopped).toBe(true);
  });
});
