import { invalidRequest } from '@mango/domain-kernel';

/**
 * Opaque keyset cursors. A cursor names the last item of the page it ends (or, for a `prev_page`, the first
 * item of the page it starts before) and the order that produced it; reusing it with another order is a
 * 400. Clients must treat it as opaque.
 */
export type SortOrder = 'asc' | 'desc';

export interface PageCursor {
  /** The sort key of the last item returned (an id, or a sequence number for ordered logs). */
  after: string;
  order: SortOrder;
  /** Which list the cursor belongs to, so a cursor from one list cannot page another. */
  scope: string;
  /** `before`: a `prev_page` cursor: the page of items that come just before `after` in `order`. */
  direction?: 'before';
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 1000;

export function encodeCursor(cursor: PageCursor): string {
  const fields = [cursor.scope, cursor.order, cursor.after, ...(cursor.direction ? [cursor.direction] : [])];
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

export function decodeCursor(
  page: string,
  expected: {
    scope: string;
    order: SortOrder;
    /** The list answers `prev_page` cursors. */ backwards?: boolean;
  },
): PageCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
  } catch {
    throw invalidRequest('page is not a valid page cursor');
  }
  if (
    !Array.isArray(parsed) ||
    (parsed.length !== 3 && !(parsed.length === 4 && parsed[3] === 'before')) ||
    typeof parsed[0] !== 'string' ||
    (parsed[1] !== 'asc' && parsed[1] !== 'desc') ||
    typeof parsed[2] !== 'string' ||
    parsed[2].length === 0 ||
    parsed[2].length > 200
  ) {
    throw invalidRequest('page is not a valid page cursor');
  }
  const [scope, order, after, direction] = parsed as [string, SortOrder, string, 'before' | undefined];
  if (scope !== expected.scope) throw invalidRequest('page cursor belongs to a different list');
  if (order !== expected.order) throw invalidRequest('page cursor was created with a different order');
  if (direction && !expected.backwards) throw invalidRequest('page is not a valid page cursor');
  return { scope, order, after, ...(direction ? { direction } : {}) };
}

/** Parses `limit` from a query string: integer 1–1000, default 20. */
export function parseLimit(raw: unknown, max = MAX_PAGE_LIMIT, fallback = DEFAULT_PAGE_LIMIT): number {
  if (raw === undefined || raw === '') return fallback;
  const text = Array.isArray(raw) ? undefined : String(raw);
  if (text === undefined || !/^\d{1,7}$/.test(text))
    throw invalidRequest(`limit must be an integer from 1 to ${max}`);
  const n = Number(text);
  if (n < 1 || n > max) throw invalidRequest(`limit must be an integer from 1 to ${max}`);
  return n;
}

export interface Page<T> {
  data: T[];
  next_page: string | null;
}

/**
 * Builds a page from `limit + 1` fetched rows: the extra row only tells whether a next page exists.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  keyOf: (row: R) => string,
  render: (row: R) => T,
  cursor: Omit<PageCursor, 'after'>,
): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(render),
    next_page: hasMore && last !== undefined ? encodeCursor({ ...cursor, after: keyOf(last) }) : null,
  };
}
