import { invalidRequest } from '@mango/domain-kernel';
import { SESSION_STATUSES } from '@mango/domain-sessions';
import { parseTimeRange, SortOrder } from '@mango/platform-pagination';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** Query-string parsing shared by the Session and event lists (openapi.yaml list parameters). */

/** `statuses[]` values a list accepts. */
export const STATUSES: readonly string[] = SESSION_STATUSES;
export const EVENT_TYPE = /^[a-z_]+\.[a-z_]+$/;

export function asList(raw: unknown): string[] {
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw : [raw]).map(String);
}

/** `order` query parameter: asc | desc, with a per-list default. */
export function parseOrder(raw: unknown, fallback: SortOrder): SortOrder {
  if (raw === undefined) return fallback;
  if (raw === 'asc' || raw === 'desc') return raw;
  throw invalidRequest('order must be asc or desc');
}

/** `created_at[gt|gte|lt|lte]` filters on `<alias>.created_at`. */
export function whereCreatedAt(qb: SelectQueryBuilder<ObjectLiteral>, alias: string, raw: unknown): void {
  const range = parseTimeRange(raw, 'created_at');
  const ops = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
  for (const op of Object.keys(ops) as Array<keyof typeof ops>) {
    const at = range[op];
    if (at) qb.andWhere(`${alias}.created_at ${ops[op]} :${op}`, { [op]: at });
  }
}
