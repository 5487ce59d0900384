import { invalidRequest } from '@mango/domain-kernel';
import { HEALTHCHECK_DEADLINE_MS, RESULT_MESSAGE_MAX } from './work-lease.constants';

/** The durable outcome of a healthcheck (docs/api-guide.md, "Environment Work — choices"). */
export type HealthcheckResultStatus = 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

/** The statuses a worker may report; `timed_out` and `cancelled` are recorded by Mango itself. */
export type ReportedResultStatus = Extract<HealthcheckResultStatus, 'succeeded' | 'failed'>;

export interface HealthcheckResult {
  readonly status: HealthcheckResultStatus;
  /** At most RESULT_MESSAGE_MAX characters. */
  readonly message: string;
}

export interface ReportedResult {
  readonly status: ReportedResultStatus;
  readonly message: string;
}

/** Validates a worker's Result body. Any violation is an InvalidRequest. */
export function parseReportedResult(input: ReportedResult): ReportedResult {
  if (input.status !== 'succeeded' && input.status !== 'failed') {
    throw invalidRequest('status must be "succeeded" or "failed"');
  }
  if (typeof input.message !== 'string') throw invalidRequest('message must be a string');
  if (input.message.length > RESULT_MESSAGE_MAX) {
    throw invalidRequest(`message exceeds ${RESULT_MESSAGE_MAX} characters`);
  }
  return { status: input.status, message: input.message };
}

/** Only a worker's own Result opens the 30 s retry window; Mango's `timed_out`/`cancelled` do not. */
export const isReportedByWorker = (result: HealthcheckResult): boolean =>
  result.status === 'succeeded' || result.status === 'failed';

export const isSameResult = (a: HealthcheckResult, b: HealthcheckResult): boolean =>
  a.status === b.status && a.message === b.message;

export const TIMED_OUT_RESULT: HealthcheckResult = {
  status: 'timed_out',
  message: `Healthcheck did not complete within ${HEALTHCHECK_DEADLINE_MS / 1000} seconds`,
};

export const CANCELLED_RESULT: HealthcheckResult = {
  status: 'cancelled',
  message: 'Healthcheck was cancelled by Stop',
};
