import type { Cidr } from '@mango/domain-webhooks';
import type { Keyring } from '@mango/platform-secrets';

export const WEBHOOKS_OPTIONS = Symbol.for('mango.WebhooksOptions');

export interface WebhooksOptions {
  /** `MANGO_WEBHOOK_ALLOWED_CIDRS`, parsed. */
  allow: readonly Cidr[];
  /** The process's keyring (`keyringFromSettings`): without one webhooks cannot be registered (secrets must be sealed). */
  keyring: Keyring | null;
}
