import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

type EnvClass = new (...args: any[]) => object;

/**
 * The audit log's settings, mixed into the env DTO of each app that records writes (apps/api and
 * apps/files read the same names): `class ApiEnv extends withAuditEnv(…)`.
 */
export function withAuditEnv<T extends EnvClass>(Base: T) {
  class AuditEnv extends Base {
    /** How long audit rows are kept (days; default 365). Older rows are deleted by the pruner. */
    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(36_500)
    MANGO_AUDIT_RETENTION_DAYS: number = 365;

    /** How often rows past the retention are deleted (seconds; default 3600; 0 turns pruning off). */
    @Type(() => Number)
    @IsInt()
    @Min(0)
    @Max(86_400)
    MANGO_AUDIT_PRUNE_SECONDS: number = 3_600;
  }
  return AuditEnv;
}

/** What the audit module needs from those settings. */
export interface AuditSettings {
  retentionMs: number;
  pruneIntervalMs: number;
}

export const AUDIT_SETTINGS = Symbol('AUDIT_SETTINGS');

export function auditSettingsFrom(env: {
  MANGO_AUDIT_RETENTION_DAYS: number;
  MANGO_AUDIT_PRUNE_SECONDS: number;
}): AuditSettings {
  return {
    retentionMs: env.MANGO_AUDIT_RETENTION_DAYS * 86_400_000,
    pruneIntervalMs: env.MANGO_AUDIT_PRUNE_SECONDS * 1_000,
  };
}
