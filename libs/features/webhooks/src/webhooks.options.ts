import type { Cidr } from '@mango/domain-webhooks';

export const WEBHOOKS_OPTIONS = Symbol.for('mango.WebhooksOptions');

export interface WebhooksOptions {
  /** `MANGO_WEBHOOK_ALLOWED_CIDRS`, parsed. */
  allow: readonly Cidr[];
  /** `MANGO_WEBHOOK_SECRETS_KEY`: without it webhooks cannot be registered (secrets must be sealed). */
  secretsKey?: string;
}
