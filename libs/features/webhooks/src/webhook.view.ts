import type { WebhookDeliveryEntity, WebhookEntity } from '@mango/persistence';

/** The wire form of a webhook endpoint (Mango addition). The signing secret is never part of it. */
export function renderWebhook(w: WebhookEntity) {
  return {
    type: 'webhook' as const,
    id: w.id,
    url: w.url,
    event_types: w.eventTypes,
    description: w.description,
    metadata: w.metadata,
    disabled: w.disabledAt !== null,
    disabled_at: w.disabledAt ? w.disabledAt.toISOString() : null,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

export type WebhookView = ReturnType<typeof renderWebhook>;

export interface AttemptRow {
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

/** One event to one endpoint, with its HTTP attempts (the delivery log). */
export function renderDelivery(
  d: WebhookDeliveryEntity,
  event: { id: string; type: string; created_at: Date },
  attempts: AttemptRow[],
) {
  return {
    type: 'webhook_delivery' as const,
    id: d.id,
    webhook_id: d.webhookId,
    event: { id: event.id, type: event.type, created_at: event.created_at.toISOString() },
    trigger: d.trigger as 'event' | 'redeliver',
    state: d.state as 'pending' | 'succeeded' | 'failed',
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      status_code: a.status_code,
      latency_ms: a.latency_ms,
      error: a.error,
      created_at: new Date(a.created_at).toISOString(),
    })),
    created_at: d.createdAt.toISOString(),
    completed_at: d.completedAt ? d.completedAt.toISOString() : null,
  };
}

export type DeliveryView = ReturnType<typeof renderDelivery>;
