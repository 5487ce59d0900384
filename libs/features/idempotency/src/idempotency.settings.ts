import type { Keyring } from '@mango/platform-secrets';

/** apps/api's Idempotency-Key settings (docs/operator-guide.md). */
export interface IdempotencySettings {
  /** How long a key and its response are kept (MANGO_IDEMPOTENCY_RETENTION_HOURS, default 24 h). */
  retentionMs: number;
  /** How often expired keys are deleted. */
  pruneIntervalMs: number;
  /**
   * Which POSTs honour the key: `all` (apps/api: every POST runs in one request transaction) or `uploads`
   * (apps/files: only `@IdempotentUpload()` routes, whose use case commits the key itself; the others
   * ignore it). Default `all`.
   */
  routes?: 'all' | 'uploads';
  /**
   * Seals the kept response of `@SealedReplay()` routes (a once-shown secret in the response); null or
   * absent: such responses are not kept (those routes refuse to work without a keyring anyway).
   */
  keyring?: Keyring | null;
}

export const IDEMPOTENCY_SETTINGS = Symbol('IDEMPOTENCY_SETTINGS');
