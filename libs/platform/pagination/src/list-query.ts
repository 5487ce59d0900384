import { invalidRequest } from '@mango/domain-kernel';

/** Query-string readers shared by list routes. Unknown values are a 400, never silently ignored. */
export function parseBooleanQuery(raw: unknown, name: string): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw invalidRequest(`${name} must be true or false`);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function parseTimestampQuery(raw: unknown, name: string): Date {
  if (typeof raw !== 'string' || !RFC3339.test(raw) || Number.isNaN(Date.parse(raw))) {
    throw invalidRequest(`${name} must be an RFC 3339 timestamp`);
  }
  return new Date(raw);
}

export interface TimeRange {
  gt?: Date;
  gte?: Date;
  lt?: Date;
  lte?: Date;
}

/** Reads `field[gte]=…` style filters (Express's extended parser makes them an object). */
export function parseTimeRange(
  raw: unknown,
  field: string,
  allowed: Array<keyof TimeRange> = ['gt', 'gte', 'lt', 'lte'],
): TimeRange {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalidRequest(`${field} must be given as ${allowed.map((k) => `${field}[${k}]`).join(', ')}`);
  }
  const range: TimeRange = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(allowed as string[]).includes(key))
      throw invalidRequest(`${field}[${key}] is not a supported filter`);
    range[key as keyof TimeRange] = parseTimestampQuery(value, `${field}[${key}]`);
  }
  return range;
}

/** Rejects query parameters a route does not define, so typos are errors rather than no-ops. */
export function rejectUnknownQuery(query: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (key === 'beta') continue; // hosted clients append ?beta=true; ignored (docs/api-guide.md, Conventions)
    if (!allowed.includes(key)) throw invalidRequest(`unknown query parameter "${key}"`);
  }
}
