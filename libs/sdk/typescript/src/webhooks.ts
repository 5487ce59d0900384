import { createHmac, timingSafeEqual } from 'node:crypto';

/** A webhook whose signature, timestamp or headers do not verify. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export interface VerifyWebhookOptions {
  /** Accepted clock skew either way, in seconds (default 300, the Standard Webhooks tolerance). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (tests). */
  now?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies a webhook delivery with the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` entries, the key being the
 * base64 after `whsec_`) and returns the parsed JSON body. Pass the raw body exactly as received.
 */
export function verifyWebhook<T = unknown>(
  body: string | Uint8Array,
  headers: HeaderBag,
  secret: string,
  options: VerifyWebhookOptions = {},
): T {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-* headers');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('invalid webhook-timestamp');
  const skew = Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (skew > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('webhook-timestamp outside the tolerance');
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('empty signing secret');
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), raw]))
    .digest();
  const ok = signatures.split(' ').some((entry) => {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new WebhookVerificationError('no matching webhook-signature');
  try {
    return JSON.parse(raw.toString('utf8')) as T;
  } catch {
    throw new WebhookVerificationError('the webhook body is not JSON');
  }
}
