import { SESSION_EVENT_TYPES } from './event-kinds';
import {
  INITIAL_SESSION_STATUS,
  nextSessionStatus,
  projectSessionStatus,
  SESSION_STATUSES,
  SessionStatus,
  StatusEvent,
} from './session-status.state';

const I = 'idle',
  R = 'running',
  S = 'rescheduling',
  T = 'terminated';

/** Expected next status for [idle, running, rescheduling, terminated], per event. */
const MOVES: Record<string, [SessionStatus, SessionStatus, SessionStatus, SessionStatus]> = {
  'session.status_running': [R, R, R, T],
  'session.status_idle': [I, I, I, T],
  'session.status_rescheduled': [S, S, S, T],
  'session.status_terminated': [T, T, T, T],
};
const UNCHANGED: [SessionStatus, SessionStatus, SessionStatus, SessionStatus] = [I, R, S, T];
const WAKES: [SessionStatus, SessionStatus, SessionStatus, SessionStatus] = [R, R, S, T];

describe('Session status state machine (statuses × events)', () => {
  const cases: Array<[string, boolean, SessionStatus, SessionStatus]> = [];
  for (const type of SESSION_EVENT_TYPES)
    for (const runnable of [false, true])
      SESSION_STATUSES.forEach((from, i) => {
        const row = MOVES[type] ?? (runnable ? WAKES : UNCHANGED);
        cases.push([type, runnable, from, row[i]!]);
      });

  it.each(cases)('%s (runnable %s) moves %s to %s', (type, runnable, from, to) => {
    expect(nextSessionStatus(from, { type, runnable })).toBe(to);
  });

  it('a new Session is idle', () => {
    expect(INITIAL_SESSION_STATUS).toBe('idle');
  });

  it('projects a batch in order', () => {
    const batch: StatusEvent[] = [
      { type: 'user.message', runnable: true },
      { type: 'session.status_running' },
      { type: 'agent.message' },
      { type: 'session.status_idle' },
    ];
    expect(projectSessionStatus('idle', batch)).toBe('idle');
    expect(projectSessionStatus('idle', batch.slice(0, 3))).toBe('running');
    expect(projectSessionStatus('running', [{ type: 'session.status_rescheduled' }])).toBe('rescheduling');
    expect(projectSessionStatus('terminated', batch)).toBe('terminated');
    expect(projectSessionStatus('idle', [])).toBe('idle');
  });

  it('refuses a status it does not know', () => {
    expect(() => projectSessionStatus('paused', [])).toThrow('unknown session status "paused"');
  });
});
