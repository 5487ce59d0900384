import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The signing secret format of docs/api-guide.md, Webhooks: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Seals webhook signing secrets at rest with AES-256-GCM under the operator key
 * (`MANGO_WEBHOOK_SECRETS_KEY`: 32 bytes, base64 or hex). apps/api seals, apps/orchestrator opens to sign.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(rawKey: string) {
    this.key = SecretBox.parseKey(rawKey);
  }

  /** 64 hex characters or base64(url) of exactly 32 bytes; throws a message naming the variable. */
  static parseKey(raw: string): Buffer {
    const text = raw.trim();
    const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    if (key.length !== 32)
      throw new Error('MANGO_WEBHOOK_SECRETS_KEY must be 32 bytes, as 64 hex characters or base64');
    return key;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
