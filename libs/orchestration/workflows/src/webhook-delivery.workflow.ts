import { proxyActivities, sleep } from '@temporalio/workflow';
import { retryDelayMs, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_BASE_MS } from '@mango/domain-webhooks';
import type { WebhookActivities } from './activities.contract';

const { deliverWebhookAttempt } = proxyActivities<WebhookActivities>({
  // An attempt's HTTP call (headers and body) is bounded by the sender's own deadline (15 s by default); this covers it plus
  // the database steps. Infrastructure failures (the worker died, PostgreSQL unreachable) are retried —
  // the activity is idempotent per attempt — and never count as a delivery attempt.
  startToCloseTimeout: '1 minute',
  // The activity heartbeats while its request is in flight: a cancellation (or a lost worker) reaches it
  // within this, and the outbound request is aborted.
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 20,
  },
});

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** First retry step (ms); hosted-like 5 s by default, shorter in tests. */
  retryBaseMs?: number;
}

/**
 * One event to one endpoint, at least once: up to 3 attempts with jittered backoff. The workflow id is
 * the delivery id, so a relay that starts it twice starts it once. `webhook-id` (the event id) is the same
 * on every attempt; each attempt is signed with a fresh `webhook-timestamp`. Deterministic: the jitter
 * comes from the workflow's seeded Math.random.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<string> {
  for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt++) {
    const final = attempt === WEBHOOK_MAX_ATTEMPTS;
    const outcome = await deliverWebhookAttempt({ deliveryId: input.deliveryId, attempt, final });
    if (outcome !== 'failed') return outcome;
    if (!final) await sleep(retryDelayMs(attempt, Math.random, input.retryBaseMs ?? WEBHOOK_RETRY_BASE_MS));
  }
  return 'failed';
}
