import { webhookTypesForSessionEvent } from '@mango/domain-webhooks';
import { newId } from '@mango/platform-ids';
import type { EntityManager } from 'typeorm';

/** NOTIFY channel: "a webhook delivery is waiting" (the table stays the truth). */
export const WEBHOOK_DELIVERIES_CHANNEL = 'mango_webhook_deliveries';

export interface WebhookEventInput {
  type: string;
  /** The resource the event is about (`data.id`). */
  id: string;
  /** Extra `data` fields (e.g. `session_thread_id`). */
  extra?: Record<string, unknown>;
}

/**
 * Records webhook events in the caller's transaction (the outbox): one `webhook_events` row per event that
 * some live, enabled endpoint of the Workspace subscribes to, and one pending `webhook_deliveries` row per
 * subscribed endpoint. Nothing is written when no endpoint listens. NOTIFY wakes the relay on commit.
 */
export async function recordWebhookEvents(
  tx: Pick<EntityManager, 'query'>,
  workspaceId: string,
  events: WebhookEventInput[],
  now: Date,
): Promise<number> {
  if (!events.length) return 0;
  const types = [...new Set(events.map((e) => e.type))];
  const hooks: Array<{ id: string; event_types: string[] }> = await tx.query(
    `SELECT id, event_types FROM webhooks
      WHERE workspace_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL AND event_types && $2::text[]`,
    [workspaceId, types],
  );
  if (!hooks.length) return 0;
  const eventRows: Array<[string, string, string]> = [];
  const deliveries: Array<[string, string, string]> = [];
  for (const e of events) {
    const listeners = hooks.filter((h) => h.event_types.includes(e.type));
    if (!listeners.length) continue;
    const id = newId('webhookEvent', now.getTime());
    const data = { type: e.type, id: e.id, workspace_id: workspaceId, ...e.extra };
    eventRows.push([id, e.type, JSON.stringify(data)]);
    for (const h of listeners) deliveries.push([newId('webhookDelivery', now.getTime()), h.id, id]);
  }
  if (!eventRows.length) return 0;
  await tx.query(
    `INSERT INTO webhook_events (id, workspace_id, type, data, created_at)
     SELECT id, $1, type, data, $2 FROM unnest($3::text[], $4::text[], $5::jsonb[]) AS t(id, type, data)`,
    [workspaceId, now, eventRows.map((r) => r[0]), eventRows.map((r) => r[1]), eventRows.map((r) => r[2])],
  );
  await insertDeliveries(tx, deliveries, 'event', now);
  return deliveries.length;
}

/** Pending deliveries ([id, webhook id, event id]) plus the relay's wake-up. */
export async function insertDeliveries(
  tx: Pick<EntityManager, 'query'>,
  rows: Array<[string, string, string]>,
  trigger: 'event' | 'redeliver',
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, event_id, trigger, state, attempts, created_at)
     SELECT id, webhook_id, event_id, $1, 'pending', 0, $2 FROM unnest($3::text[], $4::text[], $5::text[]) AS t(id, webhook_id, event_id)`,
    [trigger, now, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
  );
  await tx.query('SELECT pg_notify($1, $2)', [WEBHOOK_DELIVERIES_CHANNEL, String(rows.length)]);
}

/** The webhook events a batch of appended Session events announces. */
export function sessionWebhookEvents(
  sessionId: string,
  appended: Array<{ type: string; body: Record<string, unknown>; sessionThreadId?: string | null }>,
): WebhookEventInput[] {
  return appended.flatMap((e) =>
    webhookTypesForSessionEvent(e.type, e.body).map((type) => ({
      type,
      id: sessionId,
      // A Thread's event names its Thread (hosted §3.12 `data.session_thread_id`).
      ...(e.sessionThreadId ? { extra: { session_thread_id: e.sessionThreadId } } : {}),
    })),
  );
}
