import {
  pausedAtBudget,
  ResumeLogEvent,
  resumeStateFromLog,
  SessionResumeState,
  turnTraceparent,
} from './session-resume';

/**
 * A log in shorthand, one token per event (sequence = position + 1):
 * `msg` user.message, `conf` user.tool_confirmation, `ctr` user.custom_tool_result, `int` user.interrupt,
 * `res` user.tool_result, `run:<n>` turn n's status_running, `step:<n>:<m>` an event of turn n step m,
 * `idle:<n>:<reason>` turn n's status_idle, `budget` a budget change, `other` session.updated (title),
 * `term` session.status_terminated, `del` session.deleted, `outcome` user.define_outcome.
 */
function log(...tokens: string[]): ResumeLogEvent[] {
  return tokens.map((t, i) => {
    const seq = i + 1;
    const [what, a, b] = t.split(':');
    switch (what) {
      case 'msg':
        return { seq, type: 'user.message' };
      case 'conf':
        return { seq: String(seq), type: 'user.tool_confirmation' };
      case 'ctr':
        return { seq, type: 'user.custom_tool_result' };
      case 'int':
        return { seq, type: 'user.interrupt' };
      case 'res':
        return { seq, type: 'user.tool_result' };
      case 'run':
        return { seq, type: 'session.status_running', idempotencyKey: `turn:${a}:running` };
      case 'step':
        return { seq, type: 'agent.tool_use', idempotencyKey: `turn:${a}:step:${b}:tool_use:0` };
      case 'idle':
        return { seq, type: 'session.status_idle', idempotencyKey: `turn:${a}:idle`, stopReason: b };
      case 'budget':
        return { seq, type: 'session.updated', budgetChanged: true };
      case 'other':
        return { seq, type: 'session.updated', budgetChanged: false };
      case 'term':
        return { seq, type: 'session.status_terminated' };
      case 'del':
        return { seq, type: 'session.deleted' };
      case 'outcome':
        return { seq, type: 'user.define_outcome' };
      default:
        throw new Error(`unknown token ${t}`);
    }
  });
}

const base = { stopped: false, interrupted: 0, paused: false, resume: false };

const CASES: Array<[string, ResumeLogEvent[], SessionResumeState]> = [
  ['an empty log: nothing to do', log(), { ...base, consumed: 0, turn: 0, pending: 0 }],
  ['a first message not yet taken: turn 1 starts', log('msg'), { ...base, consumed: 0, turn: 0, pending: 1 }],
  [
    'a turn that ended: idle, nothing pending',
    log('msg', 'run:1', 'step:1:0', 'idle:1:end_turn'),
    { ...base, consumed: 1, turn: 1, pending: 1 },
  ],
  [
    'mid-tool (waiting for a result): turn 1 continues at its step, no input consumed anew',
    log('msg', 'run:1', 'step:1:0'),
    { ...base, consumed: 1, turn: 1, pending: 1, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'a result already posted in step 2: the turn continues at step 2',
    log('msg', 'run:1', 'step:1:0', 'res', 'step:1:1', 'res', 'step:1:2', 'res'),
    { ...base, consumed: 1, turn: 1, pending: 1, openTurn: { step: 2, interrupted: false } },
  ],
  [
    'begun, no step recorded yet: step 0',
    log('msg', 'run:1'),
    { ...base, consumed: 1, turn: 1, pending: 1, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'input during an open turn queues for the next one',
    log('msg', 'run:1', 'step:1:0', 'msg'),
    { ...base, consumed: 1, turn: 1, pending: 4, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'input after the last idle starts the next turn',
    log('msg', 'run:1', 'idle:1:end_turn', 'msg', 'msg'),
    { ...base, consumed: 1, turn: 1, pending: 5 },
  ],
  [
    'input during a turn that ended normally still starts the next turn',
    log('msg', 'run:1', 'msg', 'idle:1:end_turn'),
    { ...base, consumed: 1, turn: 1, pending: 3 },
  ],
  [
    'a failed turn flushed the input queued while it ran',
    log('msg', 'run:1', 'msg', 'idle:1:retries_exhausted'),
    { ...base, consumed: 3, turn: 1, pending: 3 },
  ],
  [
    'an interrupt during the open turn: the turn only ends',
    log('msg', 'run:1', 'step:1:0', 'int'),
    { ...base, consumed: 1, turn: 1, pending: 1, interrupted: 4, openTurn: { step: 0, interrupted: true } },
  ],
  [
    'an interrupt before the open turn’s input does not stop it',
    log('int', 'msg', 'run:1', 'step:1:0'),
    { ...base, consumed: 2, turn: 1, pending: 2, interrupted: 1, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'turn 3 is the latest; earlier turns do not matter',
    log('msg', 'run:1', 'idle:1:end_turn', 'msg', 'run:2', 'idle:2:end_turn', 'msg', 'run:3', 'step:3:1'),
    { ...base, consumed: 7, turn: 3, pending: 7, openTurn: { step: 1, interrupted: false } },
  ],
  [
    'paused at the budget gate, no change since: stays paused',
    log('msg', 'run:1', 'idle:1:budget_reached', 'other'),
    { ...base, consumed: 1, turn: 1, pending: 1, paused: true },
  ],
  [
    'paused, then the budget changed: the paused turn resumes',
    log('msg', 'run:1', 'idle:1:budget_reached', 'budget'),
    { ...base, consumed: 1, turn: 1, pending: 1, paused: true, resume: true },
  ],
  [
    'a budget change before the pause does not resume it',
    log('msg', 'budget', 'run:1', 'idle:1:budget_reached'),
    { ...base, consumed: 1, turn: 1, pending: 1, paused: true },
  ],
  [
    'requires_action, then a confirmation: a new turn',
    log('msg', 'run:1', 'step:1:0', 'idle:1:requires_action', 'conf'),
    { ...base, consumed: 1, turn: 1, pending: 5 },
  ],
  [
    'a custom tool result is turn-starting input',
    log('msg', 'run:1', 'idle:1:requires_action', 'ctr'),
    { ...base, consumed: 1, turn: 1, pending: 4 },
  ],
  [
    'turn keys without its status_running (a crash in between): the open turn took all input so far',
    log('msg', 'msg', 'step:1:0'),
    { ...base, consumed: 2, turn: 1, pending: 2, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'terminated: stopped',
    log('msg', 'run:1', 'step:1:0', 'term'),
    { ...base, stopped: true, consumed: 1, turn: 1, pending: 1, openTurn: { step: 0, interrupted: false } },
  ],
  ['deleted: stopped', log('msg', 'del'), { ...base, stopped: true, consumed: 0, turn: 0, pending: 1 }],
  [
    'an outcome: its turns end through the outcome loop, also when resumed mid-turn',
    log('outcome', 'run:1', 'step:1:0'),
    { ...base, consumed: 1, turn: 1, pending: 1, outcomes: true, openTurn: { step: 0, interrupted: false } },
  ],
  [
    'an outcome before any turn',
    log('outcome'),
    { ...base, consumed: 0, turn: 0, pending: 1, outcomes: true },
  ],
];

describe('resumeStateFromLog (the Session workflow state a log implies)', () => {
  it.each(CASES)('%s', (_name, events, expected) => {
    expect(resumeStateFromLog(events)).toEqual(expected);
  });

  it('is order-independent and idempotent: the same log gives the same state', () => {
    for (const [, events] of CASES) {
      const state = resumeStateFromLog(events);
      expect(resumeStateFromLog([...events].reverse())).toEqual(state);
      expect(resumeStateFromLog(events)).toEqual(state);
    }
  });

  it('ignores keys that are not turn keys and resumed status_running events', () => {
    expect(
      resumeStateFromLog([
        { seq: 1, type: 'user.message' },
        { seq: 2, type: 'session.status_running', idempotencyKey: 'turn:1:running' },
        { seq: 3, type: 'user.tool_confirmation', idempotencyKey: 'confirmation:sevt_x' },
        { seq: 4, type: 'session.status_running', idempotencyKey: 'turn:1:step:0:resumed:1' },
      ]),
    ).toEqual({ ...base, consumed: 1, turn: 1, pending: 3, openTurn: { step: 0, interrupted: false } });
  });
});

describe('pausedAtBudget (the budget pause the API refuses input at)', () => {
  it.each<[string, ResumeLogEvent[], boolean]>([
    ['no turn yet', log('msg', 'budget'), false],
    ['the last turn ended at the gate', log('msg', 'run:1', 'step:1:0', 'idle:1:budget_reached'), true],
    ['a budget change since resumes it', log('msg', 'run:1', 'idle:1:budget_reached', 'budget'), false],
    ['another Session update does not', log('msg', 'run:1', 'idle:1:budget_reached', 'other'), true],
    [
      'a budget change before the pause does not',
      log('msg', 'budget', 'run:1', 'idle:1:budget_reached'),
      true,
    ],
    ['a turn that ended otherwise', log('msg', 'run:1', 'idle:1:end_turn'), false],
    [
      'a paused turn followed by a later turn',
      log('run:1', 'idle:1:budget_reached', 'budget', 'run:2', 'idle:2:end_turn'),
      false,
    ],
    [
      'a later turn paused again',
      log('run:1', 'idle:1:budget_reached', 'budget', 'run:2', 'idle:2:budget_reached'),
      true,
    ],
    ['a turn still running', log('msg', 'run:1', 'step:1:0'), false],
  ])('%s', (_name, events, paused) => {
    expect(pausedAtBudget(resumeStateFromLog(events))).toBe(paused);
  });

  it('the suffix from the last turn start answers as the whole log', () => {
    const whole = log(
      'msg',
      'run:1',
      'idle:1:budget_reached',
      'budget',
      'msg',
      'run:2',
      'step:2:0',
      'idle:2:budget_reached',
      'other',
    );
    const lastRun = whole.map((e) => e.idempotencyKey).lastIndexOf('turn:2:running');
    expect(pausedAtBudget(resumeStateFromLog(whole.slice(lastRun)))).toBe(
      pausedAtBudget(resumeStateFromLog(whole)),
    );
  });
});

describe('turnTraceparent (the trace a turn continues)', () => {
  const ev = (type: string, tp?: unknown) => ({ type, body: tp === undefined ? {} : { _traceparent: tp } });
  it.each<[string, Array<ReturnType<typeof ev>>, string | undefined]>([
    [
      'the latest user.message',
      [ev('user.message', 'a'), ev('agent.message', 'x'), ev('user.message', 'b')],
      'b',
    ],
    [
      'a latest message without one has none (not an older one)',
      [ev('user.message', 'a'), ev('user.message')],
      undefined,
    ],
    ['no message: none', [ev('agent.message', 'x')], undefined],
    ['a value that is not a string is none', [ev('user.message', 7)], undefined],
  ])('%s', (_name, events, expected) => {
    expect(turnTraceparent(events)).toBe(expected);
  });
});
