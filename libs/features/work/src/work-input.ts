import { invalidRequest, readObject } from '@mango/domain-kernel';
import { NO_HEARTBEAT } from '@mango/domain-work-lease';
import { rejectUnknownQuery } from '@mango/platform-pagination';

/** Strict readers for the Work routes' query strings and bodies (400 on anything unexpected). */
function intParam(raw: unknown, name: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw))
    throw invalidRequest(`${name} must be an integer from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw invalidRequest(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

export interface PollInput {
  blockMs: number;
  reclaimOlderThanMs: number;
  workerId: string | null;
}

export const MAX_BLOCK_MS = 30_000;

export function parsePollQuery(query: Record<string, unknown>, workerHeader: unknown): PollInput {
  rejectUnknownQuery(query, ['block_ms', 'reclaim_older_than_ms', 'worker_id']);
  const header = typeof workerHeader === 'string' && workerHeader.length > 0 ? workerHeader : undefined;
  const raw = query.worker_id ?? header;
  if (raw !== undefined && (typeof raw !== 'string' || raw.length < 1 || raw.length > 128)) {
    throw invalidRequest('worker_id must be a string of 1–128 characters');
  }
  return {
    blockMs: intParam(query.block_ms, 'block_ms', 0, MAX_BLOCK_MS, 0),
    reclaimOlderThanMs: intParam(query.reclaim_older_than_ms, 'reclaim_older_than_ms', 0, 86_400_000, 5_000),
    workerId: (raw as string | undefined) ?? null,
  };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function parseHeartbeatQuery(query: Record<string, unknown>): {
  expectedLastHeartbeat: string;
  desiredTtlSeconds?: number;
} {
  rejectUnknownQuery(query, ['expected_last_heartbeat', 'desired_ttl_seconds']);
  const expected = query.expected_last_heartbeat;
  if (expected === undefined)
    throw invalidRequest('expected_last_heartbeat is required (NO_HEARTBEAT for the first heartbeat)');
  if (typeof expected !== 'string' || (expected !== NO_HEARTBEAT && !RFC3339.test(expected))) {
    throw invalidRequest(
      'expected_last_heartbeat must be NO_HEARTBEAT or the last_heartbeat timestamp from the previous response',
    );
  }
  const ttl =
    query.desired_ttl_seconds === undefined
      ? undefined
      : intParam(query.desired_ttl_seconds, 'desired_ttl_seconds', 1, 300, 60);
  return ttl === undefined
    ? { expectedLastHeartbeat: expected }
    : { expectedLastHeartbeat: expected, desiredTtlSeconds: ttl };
}

export function parseCreateBody(body: unknown): void {
  const o = readObject(body, 'body', ['data']);
  const data = readObject(o.data, 'data');
  if (data.type === 'session') {
    throw invalidRequest('Session Work is created by runnable Session input, not by this route');
  }
  readObject(o.data, 'data', ['type']);
  if (data.type !== 'healthcheck') throw invalidRequest('data.type must be "healthcheck"');
}

export function parseResultBody(body: unknown): { status: 'succeeded' | 'failed'; message: string } {
  const o = readObject(body, 'body', ['status', 'message']);
  if (o.status === undefined) throw invalidRequest('status is required');
  if (o.message === undefined) throw invalidRequest('message is required');
  return { status: o.status as 'succeeded' | 'failed', message: o.message as string };
}

export function parseFailBody(body: unknown): string {
  const o = readObject(body, 'body', ['message']);
  if (typeof o.message !== 'string') throw invalidRequest('message must be a string');
  return o.message;
}

export function parseStopBody(body: unknown): { force: boolean } {
  if (
    body === undefined ||
    body === null ||
    (typeof body === 'object' && Object.keys(body as object).length === 0)
  )
    return { force: false };
  const o = readObject(body, 'body', ['force']);
  if (o.force !== undefined && typeof o.force !== 'boolean') throw invalidRequest('force must be a boolean');
  return { force: o.force === true };
}

export function parseUpdateBody(body: unknown): unknown {
  const o = readObject(body, 'body', ['metadata']);
  if (o.metadata === undefined) throw invalidRequest('metadata is required');
  return o.metadata;
}
