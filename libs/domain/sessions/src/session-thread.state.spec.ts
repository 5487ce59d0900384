import { SESSION_EVENT_TYPES, THREAD_LIFECYCLE_EVENT_TYPES, THREAD_MESSAGE_EVENT_TYPES } from './event-kinds';
import {
  ArchiveDecision,
  archiveDecision,
  INITIAL_THREAD_STATUS,
  nextThreadStatus,
  projectThreadStatus,
  sessionStatusAfter,
  sessionStatusOfThreads,
  THREAD_STATUSES,
  ThreadArchiveState,
  threadAcceptsInput,
  ThreadStatus,
  threadStatusEvent,
} from './session-thread.state';

const I = 'idle',
  R = 'running',
  S = 'rescheduling',
  T = 'terminated';
type Row = [ThreadStatus, ThreadStatus, ThreadStatus, ThreadStatus];

/** Expected next status for [idle, running, rescheduling, terminated], per event. */
const MOVES: Record<string, Row> = {
  'session.thread_status_running': [R, R, R, T],
  'session.thread_status_idle': [I, I, I, T],
  'session.thread_status_rescheduled': [S, S, S, T],
  'session.thread_status_terminated': [T, T, T, T],
  'session.status_terminated': [T, T, T, T],
};
const UNCHANGED: Row = [I, R, S, T];
const WAKES: Row = [R, R, S, T];

const ALL_TYPES = [...SESSION_EVENT_TYPES, ...THREAD_LIFECYCLE_EVENT_TYPES, ...THREAD_MESSAGE_EVENT_TYPES];

describe('Thread status state machine (statuses × events)', () => {
  const cases: Array<[string, boolean, ThreadStatus, ThreadStatus]> = [];
  for (const type of ALL_TYPES)
    for (const runnable of [false, true])
      THREAD_STATUSES.forEach((from, i) => {
        const row = MOVES[type] ?? (runnable ? WAKES : UNCHANGED);
        cases.push([type, runnable, from, row[i]!]);
      });

  it.each(cases)('%s (runnable %s) moves %s to %s', (type, runnable, from, to) => {
    expect(nextThreadStatus(from, { type, runnable })).toBe(to);
  });

  it('the Session-level idle/running/rescheduled events do not move a Thread by themselves', () => {
    for (const from of THREAD_STATUSES) {
      expect(nextThreadStatus(from, { type: 'session.status_idle' })).toBe(from);
      expect(nextThreadStatus(from, { type: 'session.status_running' })).toBe(from);
    }
  });

  it('a new Thread is idle', () => {
    expect(INITIAL_THREAD_STATUS).toBe('idle');
  });

  it('projects a batch in order', () => {
    const turn = [
      { type: 'agent.thread_message_received', runnable: true },
      { type: 'session.thread_status_running' },
      { type: 'agent.message' },
      { type: 'session.thread_status_idle' },
    ];
    expect(projectThreadStatus('idle', turn)).toBe('idle');
    expect(projectThreadStatus('idle', turn.slice(0, 1))).toBe('running');
    expect(projectThreadStatus('running', [{ type: 'session.thread_status_rescheduled' }])).toBe(
      'rescheduling',
    );
    expect(projectThreadStatus('terminated', turn)).toBe('terminated');
    expect(projectThreadStatus('idle', [])).toBe('idle');
  });

  it('refuses a status it does not know', () => {
    expect(() => projectThreadStatus('paused', [])).toThrow('unknown thread status "paused"');
  });
});

describe('which events a Thread machine sees (threadStatusEvent)', () => {
  const primary = { id: 'sthr_P', primary: true };
  const child = { id: 'sthr_C', primary: false };
  // [event type, the event's session_thread_id, runnable] → [what the primary sees, what the child sees]
  const TABLE: Array<[string, string | null, boolean, string | undefined, string | undefined]> = [
    // The Session workflow owns the primary: the Session's status events are its own.
    ['session.status_running', null, false, 'session.thread_status_running', undefined],
    ['session.status_idle', null, false, 'session.thread_status_idle', undefined],
    ['session.status_rescheduled', null, false, 'session.thread_status_rescheduled', undefined],
    // A Fail ends every Thread.
    ['session.status_terminated', null, false, 'session.status_terminated', 'session.status_terminated'],
    // The child's own lifecycle moves the child only.
    ['session.thread_status_running', 'sthr_C', false, undefined, 'session.thread_status_running'],
    ['session.thread_status_idle', 'sthr_C', false, undefined, 'session.thread_status_idle'],
    ['session.thread_status_terminated', 'sthr_C', false, undefined, 'session.thread_status_terminated'],
    // Input is seen by the Thread it is addressed to.
    ['user.message', null, true, 'user.message', undefined],
    ['agent.thread_message_received', 'sthr_C', true, undefined, 'agent.thread_message_received'],
    ['user.tool_confirmation', 'sthr_C', true, undefined, 'user.tool_confirmation'],
    ['agent.thread_message_received', null, true, 'agent.thread_message_received', undefined],
    // A Session status event carrying a child's id is not the child's (children have thread_status_*).
    ['session.status_idle', 'sthr_C', false, undefined, undefined],
    ['session.thread_status_idle', 'sthr_P', false, 'session.thread_status_idle', undefined],
  ];

  it.each(TABLE)('%s on %s (runnable %s): primary sees %s, child sees %s', (type, owner, runnable, p, c) => {
    const event = { type, sessionThreadId: owner, runnable };
    expect(threadStatusEvent(primary, event)?.type).toBe(p);
    expect(threadStatusEvent(child, event)?.type).toBe(c);
  });

  it('a child woken by its input runs while the primary stays idle, and the Session runs', () => {
    const events = [{ type: 'agent.thread_message_received', sessionThreadId: 'sthr_C', runnable: true }];
    const see = (t: typeof primary) =>
      projectThreadStatus(
        'idle',
        events.map((e) => threadStatusEvent(t, e)).filter((e) => e !== undefined),
      );
    expect(see(primary)).toBe('idle');
    expect(see(child)).toBe('running');
    expect(sessionStatusOfThreads(see(primary), [see(child)])).toBe('running');
  });
});

describe('the Session runs while any Thread runs (sessionStatusOfThreads)', () => {
  const TABLE: Array<[ThreadStatus, ThreadStatus[], ThreadStatus]> = [
    [I, [], I],
    [R, [], R],
    [S, [], S],
    [T, [], T],
    [I, [R], R],
    [I, [I, I], I],
    [I, [S], S],
    [I, [S, R], R],
    [R, [S], R],
    [I, [T], I],
    [I, [T, R], R],
    // A terminated primary is a terminated Session whatever the children say.
    [T, [R], T],
  ];
  it.each(TABLE)('primary %s, children %j → %s', (primary, others, expected) => {
    expect(sessionStatusOfThreads(primary, others)).toBe(expected);
  });
});

describe('archive rules', () => {
  const at = new Date('2026-12-01T00:00:00Z');
  const child = (over: Partial<ThreadArchiveState>): ThreadArchiveState => ({
    status: 'idle',
    parentThreadId: 'sthr_P',
    archiveRequestedAt: null,
    archivedAt: null,
    ...over,
  });
  const TABLE: Array<[string, ThreadArchiveState, ArchiveDecision, boolean]> = [
    // [case, thread, decision, accepts input]
    ['an idle child (end_turn or requires_action)', child({}), 'request', true],
    ['a running child', child({ status: 'running' }), 'running', true],
    ['a rescheduling child', child({ status: 'rescheduling' }), 'running', true],
    ['a terminated child', child({ status: 'terminated' }), 'terminated', false],
    ['a child whose archive is requested', child({ archiveRequestedAt: at }), 'already', false],
    ['an archived child', child({ archiveRequestedAt: at, archivedAt: at }), 'already', false],
    ['the primary', child({ parentThreadId: null }), 'primary', true],
    ['the primary while running', child({ parentThreadId: null, status: 'running' }), 'primary', true],
  ];
  it.each(TABLE)('%s: archive %s', (_case, thread, decision, accepts) => {
    expect(archiveDecision(thread)).toBe(decision);
    expect(threadAcceptsInput(thread)).toBe(accepts);
  });

  it('refuses a status it does not know', () => {
    expect(() => archiveDecision(child({ status: 'paused' as ThreadStatus }))).toThrow(
      'unknown thread status "paused"',
    );
  });
});

describe('the Session-versus-Thread status precedence (sessionStatusAfter)', () => {
  it.each<
    [string, ThreadStatus, { primary: ThreadStatus; delegates: ThreadStatus[] } | undefined, ThreadStatus]
  >([
    ['without Threads read, the Session keeps its own status', R, undefined, R],
    ['with only the primary, the Session keeps its own status', I, { primary: R, delegates: [] }, I],
    ['a running delegate keeps an idle Session running', I, { primary: I, delegates: [R] }, R],
    ['a rescheduling delegate makes an idle Session rescheduling', I, { primary: I, delegates: [S] }, S],
    [
      'every Thread idle: the Session is idle, whatever its own machine said',
      R,
      { primary: I, delegates: [I] },
      I,
    ],
    ['a terminated Session stays terminated whatever its Threads', T, { primary: I, delegates: [R] }, T],
    ['a terminated primary terminates the Session', R, { primary: T, delegates: [R] }, T],
  ])('%s', (_name, own, threads, expected) => {
    expect(sessionStatusAfter(own, threads)).toBe(expected);
  });
});
