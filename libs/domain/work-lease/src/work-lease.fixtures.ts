import { DomainError, ErrorCode } from '@mango/domain-kernel';
import type { ReportedResult } from './healthcheck-result';
import { NO_HEARTBEAT } from './work-lease.constants';
import {
  ack,
  claim,
  createHealthcheck,
  createSessionWork,
  heartbeat,
  recordResult,
  stop,
} from './work-lease.state';
import type { WorkKind, WorkLease } from './work-lease.types';

/**
 * Test fixtures: every lease is reached through the real transitions, on one timeline.
 *   0 s created + claimed · 1 s Ack (starting lease to 61 s) · 2 s first heartbeat (lease to 62 s)
 *   3 s Stop · 120 s healthcheck deadline
 */
export const T0 = new Date('2026-10-01T12:00:00.000Z');
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
export const wire = (seconds: number): string => at(seconds).toISOString();

export const KINDS: WorkKind[] = ['session', 'healthcheck'];

export const createdWork = (kind: WorkKind): WorkLease =>
  kind === 'session' ? createSessionWork(T0) : createHealthcheck(T0);
export const claimedWork = (kind: WorkKind): WorkLease => claim(createdWork(kind), at(0)).next;
export const startingWork = (kind: WorkKind): WorkLease => ack(claimedWork(kind), at(1)).next;
export const activeWork = (kind: WorkKind): WorkLease =>
  heartbeat(startingWork(kind), { expectedLastHeartbeat: NO_HEARTBEAT }, at(2)).next;
export const stoppingWork = (kind: WorkKind): WorkLease =>
  stop(activeWork(kind), { force: false }, at(3)).next;
export const stoppedWork = (kind: WorkKind): WorkLease => stop(activeWork(kind), { force: true }, at(3)).next;

export const SUCCEEDED: ReportedResult = {
  status: 'succeeded',
  message: 'Sandbox process and workspace check passed',
};
/** A healthcheck whose worker reported SUCCEEDED at 10 s (retry window until 40 s). */
export const completedCheck = (): WorkLease =>
  recordResult(activeWork('healthcheck'), SUCCEEDED, at(10)).next;

export function caught(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, but nothing was thrown');
}

export function expectError(fn: () => unknown, code: ErrorCode, message?: RegExp): DomainError {
  const error = caught(fn);
  expect(error.code).toBe(code);
  if (message) expect(error.message).toMatch(message);
  return error;
}
