import { randomBytes } from 'node:crypto';
import {
  Keyring,
  LEGACY_WEBHOOK_KEY_ID,
  openStored,
  SealedJson,
  sealJson,
  StoredSealed,
  webhookSecretBinding,
} from '@mango/platform-secrets';

/** The signing secret format of docs/api-guide.md, Webhooks: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Seals a webhook signing secret at rest with the keyring's active key (`@mango/platform-secrets`), bound to
 * the webhook's id: the stored JSON records the key id, and a secret copied to another webhook row does
 * not open. apps/api seals, apps/orchestrator opens to sign.
 */
export function sealWebhookSecret(keyring: Keyring, webhookId: string, secret: string): SealedJson {
  return sealJson(keyring, secret, webhookSecretBinding(webhookId));
}

/**
 * Opens one stored signing secret of `webhookId`; a secret sealed before key ids (`{sealed}`, the older
 * `MANGO_WEBHOOK_SECRETS_KEY`) opens with key `webhook-legacy`. Throws KeyringError (key ids only) when it
 * does not open.
 */
export function openWebhookSecret(keyring: Keyring, webhookId: string, stored: StoredSealed): string {
  return openStored(keyring, stored, webhookSecretBinding(webhookId), LEGACY_WEBHOOK_KEY_ID);
}

/** The sealing before the one keyring, for tests that need values as older versions stored them. */
export { SecretBox } from './legacy-secret-box';
