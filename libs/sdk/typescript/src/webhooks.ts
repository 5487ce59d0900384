import { Webhook } from 'standardwebhooks';

/** The thin payload of every Mango webhook delivery (hosted §3.12; no `organization_id` in Mango). */
export interface WebhookEvent {
  type: 'event';
  /** Equals the `webhook-id` header; the same on every attempt and redelivery — deduplicate on it. */
  id: string;
  created_at: string;
  data: { type: string; id: string; workspace_id: string; [extra: string]: unknown };
}

/** Thrown by {@link unwrapWebhook} when no secret verifies the delivery (or the body is not an event). */
export class InvalidWebhookSignatureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Invalid webhook: ${message}`, options);
    this.name = 'InvalidWebhookSignatureError';
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  const v =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

/**
 * Verifies a delivery with the Standard Webhooks scheme (the maintained `standardwebhooks` library:
 * `webhook-id`, `webhook-timestamp` within 5 minutes, `webhook-signature`) and returns the parsed event.
 * Pass the raw request body exactly as received. `secrets` may list several `whsec_` secrets (during a
 * rotation, the old and the new one): the delivery is accepted when any of them verifies it.
 */
export function unwrapWebhook(
  body: string | Buffer,
  headers: HeaderBag,
  secrets: string | string[],
): WebhookEvent {
  const list = Array.isArray(secrets) ? secrets : [secrets];
  if (list.length === 0) throw new InvalidWebhookSignatureError('no signing secret given');
  const h = {
    'webhook-id': header(headers, 'webhook-id'),
    'webhook-timestamp': header(headers, 'webhook-timestamp'),
    'webhook-signature': header(headers, 'webhook-signature'),
  };
  let last: unknown;
  for (const secret of list) {
    try {
      const event = new Webhook(secret).verify(body, h) as WebhookEvent;
      if (event?.type !== 'event' || typeof event.id !== 'string' || event.id !== h['webhook-id'])
        throw new InvalidWebhookSignatureError('the body is not a Mango webhook event for this webhook-id');
      return event;
    } catch (e) {
      if (e instanceof InvalidWebhookSignatureError) throw e;
      last = e;
    }
  }
  throw new InvalidWebhookSignatureError(String((last as Error)?.message ?? last), { cause: last });
}
