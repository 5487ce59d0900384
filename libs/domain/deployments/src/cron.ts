import { invalidRequest } from '@mango/domain-kernel';

/**
 * 5-field POSIX cron (minute hour day-of-month month day-of-week), as in docs/api-guide.md, Deployments and as Temporal Schedules
 * read it: `*`, numbers, ranges `a-b`, steps `x/n`, lists `a,b`, month names JAN–DEC and weekday names
 * SUN–SAT (0 and 7 are Sunday). When both day fields are restricted a day matches either (POSIX).
 */
export interface ParsedCron {
  expression: string;
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  dayRestricted: boolean;
  weekdayRestricted: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  namesFrom?: number;
}

const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, namesFrom: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: WEEKDAYS, namesFrom: 0 },
];

function value(token: string, f: FieldSpec, path: string): number {
  const upper = token.toUpperCase();
  if (f.names) {
    const i = f.names.indexOf(upper);
    if (i >= 0) return i + f.namesFrom!;
  }
  if (!/^\d{1,2}$/.test(token)) throw invalidRequest(`${path}: "${token}" is not a valid ${f.name}`);
  const n = Number(token);
  if (n < f.min || n > f.max) throw invalidRequest(`${path}: ${f.name} ${n} is outside ${f.min}–${f.max}`);
  return n;
}

function field(text: string, f: FieldSpec, path: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    if (part === '') throw invalidRequest(`${path}: empty list entry in the ${f.name} field`);
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined) throw invalidRequest(`${path}: "${part}" has more than one step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) < 1)
        throw invalidRequest(`${path}: "${part}" needs a step of at least 1`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = f.min;
      hi = f.max;
    } else if (range!.includes('-')) {
      const [a, b, more] = range!.split('-');
      if (more !== undefined || !a || !b) throw invalidRequest(`${path}: "${part}" is not a valid range`);
      lo = value(a, f, path);
      hi = value(b, f, path);
      if (lo > hi) throw invalidRequest(`${path}: the range "${range}" runs backwards`);
    } else {
      lo = value(range!, f, path);
      hi = stepText === undefined ? lo : f.max;
    }
    for (let n = lo; n <= hi; n += step) out.add(f.name === 'day-of-week' && n === 7 ? 0 : n);
  }
  return out;
}

export function parseCron(raw: unknown, path = 'schedule.expression'): ParsedCron {
  if (typeof raw !== 'string') throw invalidRequest(`${path} must be a string`);
  const parts = raw.trim().split(/\s+/);
  if (raw.trim() === '' || parts.length !== 5)
    throw invalidRequest(`${path} must have 5 fields (minute hour day-of-month month day-of-week)`);
  if (raw.startsWith('@')) throw invalidRequest(`${path}: macros such as @daily are not accepted`);
  const [minutes, hours, days, months, weekdays] = parts.map((p, i) => field(p, FIELDS[i]!, path));
  const cron: ParsedCron = {
    expression: parts.join(' '),
    minutes: minutes!,
    hours: hours!,
    days: days!,
    months: months!,
    weekdays: weekdays!,
    dayRestricted: parts[2] !== '*',
    weekdayRestricted: parts[4] !== '*',
  };
  if (nextMatches(cron, Date.UTC(2024, 0, 1), 1).length === 0)
    throw invalidRequest(`${path}: "${cron.expression}" never fires`);
  return cron;
}

/** Whether a wall-clock minute matches (fields read in the same zone as the instant's parts). */
export function matches(c: ParsedCron, d: Date): boolean {
  if (
    !c.minutes.has(d.getUTCMinutes()) ||
    !c.hours.has(d.getUTCHours()) ||
    !c.months.has(d.getUTCMonth() + 1)
  )
    return false;
  const dom = c.days.has(d.getUTCDate());
  const dow = c.weekdays.has(d.getUTCDay());
  if (c.dayRestricted && c.weekdayRestricted) return dom || dow;
  if (c.dayRestricted) return dom;
  if (c.weekdayRestricted) return dow;
  return true;
}

/** Up to `n` matching minutes (UTC wall clock) from `fromMs`, searching at most 8 years ahead. */
export function nextMatches(c: ParsedCron, fromMs: number, n: number): number[] {
  const out: number[] = [];
  const limit = fromMs + 8 * 366 * 24 * 60 * 60_000;
  let t = Math.ceil(fromMs / 60_000) * 60_000;
  while (t <= limit && out.length < n) {
    const d = new Date(t);
    // Skip whole days and hours that cannot match (keeps the scan short for sparse schedules).
    if (!c.months.has(d.getUTCMonth() + 1) || !dayMatches(c, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
      continue;
    }
    if (!c.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
      continue;
    }
    if (matches(c, d)) out.push(t);
    t += 60_000;
  }
  return out;
}

function dayMatches(c: ParsedCron, d: Date): boolean {
  const dom = c.days.has(d.getUTCDate());
  const dow = c.weekdays.has(d.getUTCDay());
  if (c.dayRestricted && c.weekdayRestricted) return dom || dow;
  if (c.dayRestricted) return dom;
  if (c.weekdayRestricted) return dow;
  return true;
}

/**
 * Hosted §2.12 jitter: up to 15% of the schedule's interval, at least 5 s, at most 9 minutes. The interval
 * is the shortest gap between consecutive runs over the next 60 runs (wall clock, so DST shifts aside).
 */
export function scheduleJitterMs(c: ParsedCron, fromMs: number = Date.UTC(2026, 0, 1)): number {
  const runs = nextMatches(c, fromMs, 60);
  let interval = Infinity;
  for (let i = 1; i < runs.length; i++) interval = Math.min(interval, runs[i]! - runs[i - 1]!);
  if (!Number.isFinite(interval)) interval = 365 * 24 * 60 * 60_000;
  return Math.min(9 * 60_000, Math.max(5_000, Math.floor(interval * 0.15)));
}

/** An IANA time zone name this runtime knows (`UTC` included). */
export function parseTimezone(raw: unknown, path = 'schedule.timezone'): string {
  if (typeof raw !== 'string' || raw === '') throw invalidRequest(`${path} must be an IANA time zone name`);
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
    if (!resolved) throw new Error('unknown');
  } catch {
    throw invalidRequest(`${path}: "${raw}" is not an IANA time zone`);
  }
  if (!/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(raw) || /^[+-]?\d/.test(raw))
    throw invalidRequest(`${path}: "${raw}" is not an IANA time zone name`);
  return raw;
}
