/** apps/api's Idempotency-Key settings (docs/operator-guide.md). */
export interface IdempotencySettings {
  /** How long a key and its response are kept (MANGO_IDEMPOTENCY_RETENTION_HOURS, default 24 h). */
  retentionMs: number;
  /** How often expired keys are deleted. */
  pruneIntervalMs: number;
}

export const IDEMPOTENCY_SETTINGS = Symbol('IDEMPOTENCY_SETTINGS');
