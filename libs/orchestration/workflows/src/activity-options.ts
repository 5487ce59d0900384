import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import { MODEL_REQUEST_ATTEMPTS } from './activities.contract';

/**
 * Activities that wait on the model (a model step, a grader request) heartbeat while they wait: a worker
 * that dies mid-request is noticed in seconds and the activity is retried elsewhere (its events are
 * idempotent). Heartbeats also deliver an interrupt's cancellation, and the turn waits for the activity
 * to stop before it goes idle, so no event of the interrupted request can land after the idle.
 */
export const MODEL_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: MODEL_REQUEST_ATTEMPTS,
  },
};
