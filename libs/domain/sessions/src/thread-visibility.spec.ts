import { SESSION_EVENT_TYPES, THREAD_LIFECYCLE_EVENT_TYPES, THREAD_MESSAGE_EVENT_TYPES } from './event-kinds';
import { needsClientAnswer, ThreadStream, visibleOn, VisibilityEvent } from './thread-visibility';

const PRIMARY: ThreadStream = { kind: 'thread', threadId: 'sthr_P', primary: true };
const CHILD: ThreadStream = { kind: 'thread', threadId: 'sthr_C', primary: false };
const OTHER: ThreadStream = { kind: 'thread', threadId: 'sthr_D', primary: false };
const WORK: ThreadStream = { kind: 'work' };

const ALL_TYPES = [...SESSION_EVENT_TYPES, ...THREAD_LIFECYCLE_EVENT_TYPES, ...THREAD_MESSAGE_EVENT_TYPES];

/**
 * Child events the primary shows (ADR 0017), with the permission that makes a tool call cross-post. A
 * child's own `agent.thread_message_*` are not among them: the primary has its own side of each exchange.
 */
const CROSS_POSTED: Record<string, string | undefined> = {
  'session.thread_created': undefined,
  'session.thread_status_running': undefined,
  'session.thread_status_idle': undefined,
  'session.thread_status_rescheduled': undefined,
  'session.thread_status_terminated': undefined,
  'agent.custom_tool_use': undefined,
  'user.tool_confirmation': undefined,
  'user.custom_tool_result': undefined,
  'session.deleted': undefined,
};
/** Child events the Work token's stream shows besides the primary's: the sandbox calls and their settling. */
const SANDBOX = ['agent.tool_use', 'user.tool_confirmation', 'user.tool_result', 'user.interrupt'];

describe('visibleOn: a child event (session_thread_id = the child) on each stream', () => {
  const cases = ALL_TYPES.map((type) => {
    const onPrimary = type in CROSS_POSTED;
    return [type, true, onPrimary, onPrimary || SANDBOX.includes(type), type === 'session.deleted'] as const;
  });
  it.each(cases)(
    '%s: child %s, primary %s, work %s, another child %s',
    (type, child, primary, work, other) => {
      const e: VisibilityEvent = { type, sessionThreadId: 'sthr_C' };
      expect(visibleOn(CHILD, e)).toBe(child);
      expect(visibleOn(PRIMARY, e)).toBe(primary);
      expect(visibleOn(WORK, e)).toBe(work);
      expect(visibleOn(OTHER, e)).toBe(other);
    },
  );
});

describe('visibleOn: a primary event (no session_thread_id) on each stream', () => {
  it.each(ALL_TYPES)('%s: on the primary and the Work stream, not on a child', (type) => {
    for (const e of [{ type }, { type, sessionThreadId: null }]) {
      expect(visibleOn(PRIMARY, e)).toBe(true);
      expect(visibleOn(WORK, e)).toBe(true);
      expect(visibleOn(CHILD, e)).toBe(type === 'session.deleted');
    }
  });
});

describe('cross-posting of a child tool call depends on who answers it', () => {
  // [type, evaluated_permission, cross-posted to the primary, on the Work stream]
  const TABLE: Array<[string, string | undefined, boolean, boolean]> = [
    ['agent.tool_use', 'ask', true, true],
    ['agent.tool_use', 'allow', false, true],
    ['agent.tool_use', 'deny', false, true],
    ['agent.mcp_tool_use', 'ask', true, true],
    ['agent.mcp_tool_use', 'allow', false, false],
    ['agent.mcp_tool_use', 'deny', false, false],
    ['agent.custom_tool_use', undefined, true, true],
    ['agent.tool_result', undefined, false, false],
    ['agent.mcp_tool_result', undefined, false, false],
  ];
  it.each(TABLE)('%s (%s): primary %s, work %s', (type, permission, primary, work) => {
    const e = { type, sessionThreadId: 'sthr_C', evaluatedPermission: permission };
    expect(needsClientAnswer(e)).toBe(primary);
    expect(visibleOn(PRIMARY, e)).toBe(primary);
    expect(visibleOn(WORK, e)).toBe(work);
    expect(visibleOn(CHILD, e)).toBe(true);
    expect(visibleOn(OTHER, e)).toBe(false);
  });
});

describe('a child stream never shows the primary or a sibling', () => {
  it('filters a mixed log to each stream', () => {
    const log: Array<VisibilityEvent & { n: number }> = [
      { n: 1, type: 'user.message' },
      { n: 2, type: 'agent.tool_use', evaluatedPermission: 'allow' },
      { n: 3, type: 'agent.thread_message_sent', sessionThreadId: null },
      { n: 4, type: 'session.thread_created', sessionThreadId: 'sthr_C' },
      { n: 5, type: 'agent.thread_message_received', sessionThreadId: 'sthr_C' },
      { n: 6, type: 'agent.message', sessionThreadId: 'sthr_C' },
      { n: 7, type: 'agent.tool_use', sessionThreadId: 'sthr_C', evaluatedPermission: 'allow' },
      { n: 8, type: 'user.tool_result', sessionThreadId: 'sthr_C' },
      { n: 9, type: 'agent.tool_use', sessionThreadId: 'sthr_C', evaluatedPermission: 'ask' },
      { n: 10, type: 'user.tool_confirmation', sessionThreadId: 'sthr_C' },
      { n: 11, type: 'agent.message', sessionThreadId: 'sthr_D' },
      { n: 12, type: 'agent.thread_message_received', sessionThreadId: null },
    ];
    const on = (s: ThreadStream) => log.filter((e) => visibleOn(s, e)).map((e) => e.n);
    expect(on(PRIMARY)).toEqual([1, 2, 3, 4, 9, 10, 12]);
    expect(on(CHILD)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(on(OTHER)).toEqual([11]);
    expect(on(WORK)).toEqual([1, 2, 3, 4, 7, 8, 9, 10, 12]);
  });
});
