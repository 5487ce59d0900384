import { DomainError } from '@mango/domain-kernel';
import { nextMatches, parseCron, parseTimezone, scheduleJitterMs } from './cron';
import { parseDeploymentCreate, parseDeploymentUpdate } from './deployment-input';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
};
const iso = (ms: number[]) => ms.map((t) => new Date(t).toISOString());
const FROM = Date.UTC(2026, 11, 1, 10, 30); // Tue 2026-12-01 10:30Z

describe('cron expressions', () => {
  it.each<[string, string[]]>([
    ['* * * * *', ['2026-12-01T10:30:00.000Z', '2026-12-01T10:31:00.000Z', '2026-12-01T10:32:00.000Z']],
    ['*/15 * * * *', ['2026-12-01T10:30:00.000Z', '2026-12-01T10:45:00.000Z', '2026-12-01T11:00:00.000Z']],
    ['0 9 * * MON-FRI', ['2026-12-02T09:00:00.000Z', '2026-12-03T09:00:00.000Z', '2026-12-04T09:00:00.000Z']],
    ['0 0 1 * *', ['2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z']],
    [
      '0 12 1 JAN,jul *',
      ['2027-01-01T12:00:00.000Z', '2027-07-01T12:00:00.000Z', '2028-01-01T12:00:00.000Z'],
    ],
    ['0 0 * * 7', ['2026-12-06T00:00:00.000Z', '2026-12-13T00:00:00.000Z', '2026-12-20T00:00:00.000Z']],
    // Both day fields restricted: either matches (POSIX).
    ['0 0 13 * 5', ['2026-12-04T00:00:00.000Z', '2026-12-11T00:00:00.000Z', '2026-12-13T00:00:00.000Z']],
    [
      '30 10-11/1 1 12 *',
      ['2026-12-01T10:30:00.000Z', '2026-12-01T11:30:00.000Z', '2027-12-01T10:30:00.000Z'],
    ],
    // The scan looks 8 years ahead: enough for leap days.
    ['0 0 29 2 *', ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']],
  ])('%s fires at %j', (expr, runs) => {
    expect(iso(nextMatches(parseCron(expr), FROM, 3))).toEqual(runs);
  });

  it.each<[unknown, RegExp]>([
    ['* * * *', /5 fields/],
    ['* * * * * *', /5 fields/],
    ['', /5 fields/],
    [7, /must be a string/],
    ['60 * * * *', /minute 60 is outside 0–59/],
    ['* 24 * * *', /hour 24/],
    ['* * 0 * *', /day-of-month 0/],
    ['* * * 13 *', /month 13/],
    ['* * * * 8', /day-of-week 8/],
    ['*/0 * * * *', /step of at least 1/],
    ['5-1 * * * *', /runs backwards/],
    ['1,,2 * * * *', /empty list entry/],
    ['a * * * *', /not a valid minute/],
    ['* * * FOO *', /not a valid month/],
    ['0 0 30 2 *', /never fires/],
    ['1-2-3 * * * *', /not a valid range/],
  ])('refuses %j', (expr, re) => expect(refusal(() => parseCron(expr))).toMatch(re));

  it.each<[string, number]>([
    ['* * * * *', 9_000],
    ['*/5 * * * *', 45_000],
    ['0 * * * *', 540_000],
    ['0 9 * * *', 540_000],
    ['0,1 * * * *', 9_000],
  ])('jitter of %s is %d ms (15%% of the interval, 5 s–9 min)', (expr, ms) => {
    expect(scheduleJitterMs(parseCron(expr))).toBe(ms);
  });

  it.each(['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata'])('accepts %s', (tz) =>
    expect(parseTimezone(tz)).toBe(tz),
  );
  it.each(['Mars/Olympus', '', '+01:00', 'Not A Zone'])('refuses the time zone %j', (tz) =>
    expect(refusal(() => parseTimezone(tz))).toMatch(/time zone/),
  );
});

describe('deployment input', () => {
  const ok = {
    name: 'nightly',
    agent: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    environment_id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
  };
  it('reads a minimal create (manual-only) and a scheduled one', () => {
    expect(parseDeploymentCreate(ok)).toMatchObject({
      schedule: null,
      agent: { version: null },
      resources: [],
    });
    expect(
      parseDeploymentCreate({ ...ok, schedule: { type: 'cron', expression: '0  9 * * *', timezone: 'UTC' } })
        .schedule,
    ).toEqual({ type: 'cron', expression: '0 9 * * *', timezone: 'UTC', jitterMs: 540_000 });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no name', { name: undefined }, /name is required/],
    ['no initial_events', { initial_events: undefined }, /initial_events is required/],
    ['zero initial_events', { initial_events: [] }, /at least 1/],
    ['51 initial_events', { initial_events: Array(51).fill(ok.initial_events[0]) }, /at most 50/],
    [
      'a define_outcome',
      { initial_events: [{ type: 'user.define_outcome', description: 'x' }] },
      /not supported by Mango/,
    ],
    [
      'a system.message',
      { initial_events: [{ type: 'system.message', content: [] }] },
      /not supported by Mango/,
    ],
    ['an interrupt', { initial_events: [{ type: 'user.interrupt' }] }, /only user.message/],
    ['a bad agent', { agent: 'nope' }, /agent must be an agent_ id/],
    ['a bad agent version', { agent: { type: 'agent', id: ok.agent, version: 0 } }, /at least 1/],
    ['a bad environment', { environment_id: 'x' }, /env_ id/],
    [
      'a non-cron schedule',
      { schedule: { type: 'rate', expression: '* * * * *', timezone: 'UTC' } },
      /"cron"/,
    ],
    [
      'a schedule without timezone',
      { schedule: { type: 'cron', expression: '* * * * *' } },
      /timezone is required/,
    ],
    ['a bad cron', { schedule: { type: 'cron', expression: '* *', timezone: 'UTC' } }, /5 fields/],
    [
      'a bad zone',
      { schedule: { type: 'cron', expression: '* * * * *', timezone: 'Moon/Base' } },
      /time zone/,
    ],
    ['a malformed vault id', { vault_ids: ['v1'] }, /vlt_ id/],
    [
      'a vault listed twice',
      { vault_ids: ['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB'] },
      /twice/,
    ],
    [
      '21 vault ids (a Session attaches at most 20)',
      {
        vault_ids: Array.from(
          { length: 21 },
          (_, i) => `vlt_01JD2Y3QX9V5M8K7R6T4W2P0${String(i).padStart(2, 'A')}`,
        ),
      },
      /at most 20/,
    ],
    ['a file resource', { resources: [{ type: 'file', file_id: 'file_x' }] }, /self-hosted/],
    ['a bad budget', { budget: { type: 'limit' } }, /max_list_cost/],
    ['an unknown field', { owner: 'x' }, /unknown field/],
  ])('refuses %s', (_label, patch, re) => {
    expect(refusal(() => parseDeploymentCreate({ ...ok, ...patch }))).toMatch(re);
  });

  it('reads updates (null schedule = manual only, name not clearable)', () => {
    expect(parseDeploymentUpdate({ schedule: null })).toEqual({ schedule: null });
    expect(refusal(() => parseDeploymentUpdate({ name: null }))).toMatch(/cannot be cleared/);
    expect(parseDeploymentUpdate({ vault_ids: [] })).toEqual({ vaultIds: [] });
    expect(parseDeploymentUpdate({ vault_ids: null })).toEqual({ vaultIds: [] });
    expect(parseDeploymentCreate({ ...ok, vault_ids: ['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB'] }).vaultIds).toEqual([
      'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    ]);
  });
});
