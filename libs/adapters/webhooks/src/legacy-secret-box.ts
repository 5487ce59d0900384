import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * How webhook signing secrets were sealed before the one keyring: AES-256-GCM under
 * `MANGO_WEBHOOK_SECRETS_KEY`, no key id, bound to nothing (`{sealed}` in `webhooks.secrets`). Production
 * code no longer seals this way (secret-box.ts does) and opens such values through the keyring (key id
 * `webhook-legacy`); this stays so tests can produce values exactly as older Mango versions stored them.
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
