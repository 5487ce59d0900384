import {
  ACTIVATION_BUSY_MSG,
  ACTIVATION_IDLE_MSG,
  activationStateOf,
  IdleActivations,
} from './idle-activations';

const line = (msg: string, sessionId: string) => JSON.stringify({ level: 30, msg, session_id: sessionId });

describe('activationStateOf', () => {
  it.each([
    [line(ACTIVATION_IDLE_MSG, 'sesn_a'), 'idle'],
    [line(ACTIVATION_BUSY_MSG, 'sesn_a'), 'busy'],
    [line(ACTIVATION_IDLE_MSG, 'sesn_b'), undefined], // another Session's line
    [line('session activation ended', 'sesn_a'), undefined],
    [`not json ${ACTIVATION_IDLE_MSG}`, undefined],
    [JSON.stringify({ msg: 'x', note: ACTIVATION_IDLE_MSG, session_id: 'sesn_a' }), undefined],
  ])('%s → %s', (input, expected) => {
    expect(activationStateOf(input, 'sesn_a')).toBe(expected);
  });
});

describe('IdleActivations', () => {
  it('picks the activation idle longest, past the minimum, and never one already asked to end', () => {
    const idle = new IdleActivations();
    idle.observe('work_1', 'sesn_1', line(ACTIVATION_IDLE_MSG, 'sesn_1'), 1000);
    idle.observe('work_2', 'sesn_2', line(ACTIVATION_IDLE_MSG, 'sesn_2'), 500);
    idle.observe('work_3', 'sesn_3', line(ACTIVATION_IDLE_MSG, 'sesn_3'), 2900);
    expect(idle.pick(3000, 2000)).toBe('work_2');
    expect(idle.pick(2000, 2000)).toBeUndefined(); // none idle 2 s yet
    expect(idle.idleFor('work_2', 3000)).toBe(2500);
    idle.yielding('work_2');
    expect(idle.pick(3000, 2000)).toBe('work_1');
    expect(idle.pick(3000, 0)).toBe('work_1');
  });

  it('a repeated idle keeps the first time; busy and forget drop it', () => {
    const idle = new IdleActivations();
    idle.observe('work_1', 'sesn_1', line(ACTIVATION_IDLE_MSG, 'sesn_1'), 1000);
    idle.observe('work_1', 'sesn_1', line(ACTIVATION_IDLE_MSG, 'sesn_1'), 4000);
    expect(idle.idleFor('work_1', 5000)).toBe(4000);
    idle.observe('work_1', 'sesn_1', line(ACTIVATION_BUSY_MSG, 'sesn_1'), 5000);
    expect(idle.pick(10_000, 0)).toBeUndefined();
    expect(idle.idleFor('work_1')).toBeUndefined();
    idle.observe('work_1', 'sesn_1', line(ACTIVATION_IDLE_MSG, 'sesn_1'), 6000);
    idle.yielding('work_1');
    idle.forget('work_1');
    expect(idle.pick(10_000, 0)).toBeUndefined();
    // A line naming another Session changes nothing for this Work.
    idle.observe('work_2', 'sesn_2', line(ACTIVATION_IDLE_MSG, 'sesn_1'), 6000);
    expect(idle.pick(10_000, 0)).toBeUndefined();
  });
});
