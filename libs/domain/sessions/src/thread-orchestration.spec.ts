import {
  ADVISOR_REF,
  callsClosedBy,
  CoordinatorSnapshot,
  decidePlatformCall,
  MAX_THREAD_MESSAGE_CHARS,
  platformTools,
  rosterMembers,
  threadAgent,
  threadAgentName,
  threadLog,
  unprefixedKey,
  lastReplyText,
} from './thread-orchestration';

const model = { id: 'claude-sonnet-4-6' };
const lead: CoordinatorSnapshot = {
  name: 'lead',
  multiagent: {
    agents: [
      { type: 'agent', name: 'writer', description: 'writes', model, tools: [] },
      { type: 'advisor', model: 'claude-opus-4-1' },
      { type: 'agent', name: 'writer', model, tools: [] },
      { type: 'agent', name: 'researcher', model, tools: [] },
    ],
  },
};

describe('the roster', () => {
  it('lists every delegate in roster order by its index, a repeated name numbered, the Advisor left out', () => {
    expect(rosterMembers(lead)).toEqual([
      { ref: '0', name: 'writer', description: 'writes' },
      { ref: '2', name: 'writer (2)', description: null },
      { ref: '3', name: 'researcher', description: null },
    ]);
    expect(threadAgentName(lead, '2')).toBe('writer (2)');
    expect(threadAgentName(lead, null)).toBe('lead');
    expect(threadAgentName(lead, ADVISOR_REF)).toBe('advisor');
  });

  it('a delegate runs its frozen definition with no roster of its own; the Advisor has no tools', () => {
    expect(threadAgent(lead, '3')).toMatchObject({ name: 'researcher', multiagent: null });
    expect(threadAgent(lead, ADVISOR_REF)).toMatchObject({ model: { id: 'claude-opus-4-1' }, tools: [] });
    expect(threadAgent(lead, '1')).toBeUndefined(); // the Advisor's entry is not a delegate
    expect(threadAgent(lead, '9')).toBeUndefined();
    expect(threadAgent({ name: 'solo' }, ADVISOR_REF)).toBeUndefined();
  });

  it('only the primary is given the platform tools, and consult_advisor only with an Advisor', () => {
    expect(platformTools(lead, true).map((t) => t.name)).toEqual([
      'list_agents',
      'send_to_agent',
      'consult_advisor',
    ]);
    expect(platformTools(lead, false)).toEqual([]);
    expect(platformTools({ name: 'solo' }, true)).toEqual([]);
  });
});

describe('decidePlatformCall: whatever the model sends', () => {
  it.each([
    [
      'a known Agent and a message',
      'send_to_agent',
      { agent: 'researcher', message: 'go' },
      { kind: 'send', message: 'go' },
    ],
    ['an unknown Agent', 'send_to_agent', { agent: 'nobody', message: 'go' }, { kind: 'error' }],
    ['a blank message', 'send_to_agent', { agent: 'writer', message: '  ' }, { kind: 'error' }],
    ['a message that is not text', 'send_to_agent', { agent: 'writer', message: 7 }, { kind: 'error' }],
    [
      'a message over the limit',
      'send_to_agent',
      { agent: 'writer', message: 'x'.repeat(MAX_THREAD_MESSAGE_CHARS + 1) },
      { kind: 'error' },
    ],
    ['a question', 'consult_advisor', { question: 'which?' }, { kind: 'advise', question: 'which?' }],
    ['no question', 'consult_advisor', {}, { kind: 'error' }],
    ['the roster', 'list_agents', {}, { kind: 'list' }],
    ['a tool that is not a platform tool', 'rm_rf', {}, { kind: 'error' }],
  ])('%s (%s)', (_, name, input, expected) => {
    expect(decidePlatformCall(name, input as Record<string, unknown>, lead)).toMatchObject(expected);
  });
});

describe("one Thread's log out of the Session's", () => {
  const log = [
    { type: 'user.message', sessionThreadId: null },
    { type: 'session.thread_created', sessionThreadId: 'sthr_a' },
    { type: 'session.thread_status_running', sessionThreadId: 'sthr_a' },
    { type: 'agent.tool_use', sessionThreadId: 'sthr_a' },
    { type: 'session.status_idle', sessionThreadId: null },
    { type: 'user.interrupt', sessionThreadId: null },
    { type: 'user.interrupt', sessionThreadId: 'sthr_b' },
    { type: 'session.thread_status_idle', sessionThreadId: 'sthr_a' },
  ];

  it("the primary's is what carries no Thread id", () => {
    expect(threadLog(log, null).map((e) => e.type)).toEqual([
      'user.message',
      'session.status_idle',
      'user.interrupt',
    ]);
  });

  it("a child's is its own, its statuses read as the Session's, plus the Session-wide interrupts", () => {
    expect(threadLog(log, 'sthr_a').map((e) => e.type)).toEqual([
      'session.thread_created',
      'session.status_running',
      'agent.tool_use',
      'user.interrupt',
      'session.status_idle',
    ]);
  });

  it('keys: a child reads its own prefixed keys only; the primary reads all as they are', () => {
    expect(unprefixedKey('thread:sthr_a:turn-1', 'sthr_a')).toBe('turn-1');
    expect(unprefixedKey('turn-1', 'sthr_a')).toBeNull();
    expect(unprefixedKey('turn-1', null)).toBe('turn-1');
    expect(unprefixedKey(null, 'sthr_a')).toBeNull();
  });

  it("a Thread's report is its last reply with text", () => {
    const text = (t: string) => ({ type: 'agent.message', body: { content: [{ type: 'text', text: t }] } });
    expect(lastReplyText([text('first'), text('last'), { type: 'agent.tool_use', body: {} }])).toBe('last');
    expect(lastReplyText([{ type: 'agent.message', body: { content: [] } }])).toBeUndefined();
  });
});

describe("callsClosedBy: whose open calls an event of the Session's whole log closes", () => {
  it.each([
    ['a Session-wide interrupt closes every Thread', { type: 'user.interrupt' }, { every: true }],
    [
      "an interrupt addressed to a Thread closes that Thread's",
      { type: 'user.interrupt', sessionThreadId: 'sthr_a' },
      { threadId: 'sthr_a' },
    ],
    [
      "the coordinator's finished turn closes only the primary's",
      { type: 'session.status_idle', body: { stop_reason: { type: 'end_turn' } } },
      { threadId: null },
    ],
    [
      "a delegate's finished turn closes only its own",
      {
        type: 'session.thread_status_idle',
        sessionThreadId: 'sthr_a',
        body: { stop_reason: { type: 'end_turn' } },
      },
      { threadId: 'sthr_a' },
    ],
    [
      'an idle that waits on the client closes nothing',
      {
        type: 'session.thread_status_idle',
        sessionThreadId: 'sthr_a',
        body: { stop_reason: { type: 'requires_action' } },
      },
      undefined,
    ],
    [
      'a running status closes nothing',
      { type: 'session.thread_status_running', sessionThreadId: 'sthr_a' },
      undefined,
    ],
  ])('%s', (_, e, expected) => {
    expect(callsClosedBy({ body: {}, ...e } as Parameters<typeof callsClosedBy>[0])).toEqual(expected);
  });

  it("agrees with threadLog: an event closes a Thread's calls exactly when it is in that Thread's log and closes there", () => {
    const events = [
      { type: 'user.interrupt', sessionThreadId: null, body: {} },
      { type: 'user.interrupt', sessionThreadId: 'sthr_a', body: {} },
      { type: 'session.status_idle', sessionThreadId: null, body: { stop_reason: { type: 'end_turn' } } },
      {
        type: 'session.thread_status_idle',
        sessionThreadId: 'sthr_a',
        body: { stop_reason: { type: 'end_turn' } },
      },
      {
        type: 'session.thread_status_idle',
        sessionThreadId: 'sthr_b',
        body: { stop_reason: { type: 'retries_exhausted' } },
      },
    ];
    for (const thread of [null, 'sthr_a', 'sthr_b'])
      for (const e of events) {
        const closes = callsClosedBy(e);
        const byRule = !!closes && ('every' in closes || closes.threadId === thread);
        const own = threadLog([e], thread);
        const byLog =
          own.length === 1 &&
          (own[0]!.type === 'user.interrupt' ||
            (own[0]!.type === 'session.status_idle' &&
              (own[0]!.body.stop_reason as { type: string }).type !== 'requires_action'));
        expect([thread, e.type, e.sessionThreadId, byRule]).toEqual([
          thread,
          e.type,
          e.sessionThreadId,
          byLog,
        ]);
      }
  });
});
