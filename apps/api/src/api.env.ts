import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';
import { withS3CredentialsEnv } from '@mango/adapter-object-store';
import { withAuditEnv } from '@mango/feature-audit';
import { withRequestRateEnv } from '@mango/feature-auth';
import { ConfigRules } from '@mango/platform-config';
import { publicBaseUrlProblems, withJsonLimitsEnv, withServingEnv } from '@mango/platform-http';
import { withTemporalEnv } from '@mango/platform-temporal';
import { ObservabilityEnv } from '@mango/platform-tracing';

/**
 * Every variable (metrics and tracing: ObservabilityEnv; fair-use request rates: withRequestRateEnv; the
 * Temporal connection: withTemporalEnv; MANGO_ENV and trusted proxies: withServingEnv) apps/api reads,
 * validated once at boot, with the rules across them (ConfigRules).
 */
@ConfigRules(publicBaseUrlProblems)
export class ApiEnv extends withAuditEnv(
  withServingEnv(
    withJsonLimitsEnv(
      withRequestRateEnv(withS3CredentialsEnv(withTemporalEnv(ObservabilityEnv, { addressRequired: false }))),
    ),
  ),
) {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MANGO_API_PORT: number = 8081;

  @IsString()
  MANGO_API_HOST: string = '127.0.0.1';

  /** How long an idle keep-alive connection stays open. Keep it above your load balancer's idle timeout. */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  MANGO_HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;

  /**
   * The URL clients and workers reach the API at, behind the ingress (it goes into each Work secret as
   * api_base_url; never the request's Host). Required outside development (MANGO_ENV), https unless loopback.
   */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_PUBLIC_BASE_URL?: string;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';

  /** Operator list prices for budgets: JSON, model id → {input, output} USD per million tokens. */
  @IsOptional()
  @IsString()
  MANGO_MODEL_PRICES?: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  MANGO_DB_POOL_SIZE: number = 20;

  // Limits that protect one API process under load (docs/operator-guide.md "Limits"). Beyond them a
  // request is refused whole — 413 request_too_large or 429 rate_limit_error — and changes nothing.

  /** Largest request body (bytes) any route accepts; a larger one is 413 (default 32 MiB, as hosted). */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(1_073_741_824)
  MANGO_MAX_REQUEST_BYTES: number = 33_554_432;

  /** Events one request may carry (POST …/events, initial_events); more is 413 (default and most 100). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  MANGO_MAX_EVENTS_PER_REQUEST: number = 100;

  /** Session event streams (SSE) this process serves at once; one more is 429 (default 10,000). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  MANGO_MAX_SSE_STREAMS: number = 10_000;

  // Fair use (docs/operator-guide.md "Fair use"; request rates: withRequestRateEnv). MANGO_FAIR_USE=off
  // turns these off too.

  /** Event streams one Workspace holds open on this process (all its credentials); one more is 429. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  MANGO_MAX_SSE_STREAMS_PER_WORKSPACE: number = 2_000;

  /** Event streams one credential (key or Work token) holds open on this process; one more is 429. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  MANGO_MAX_SSE_STREAMS_PER_KEY: number = 1_000;

  /**
   * Sessions of one Workspace with a turn under way (running or rescheduling), across every API process
   * (counted in PostgreSQL); the event that would start one more turn is 429.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE: number = 1_000;

  // Object storage (the same store and bucket as apps/files): optional. With it, event admission can read
  // File-sourced text documents (FILE_TEXT_READER); without it, File documents are refused.

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_S3_ENDPOINT?: string;

  @IsString()
  MANGO_S3_REGION: string = 'us-east-1';

  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message: 'MANGO_S3_BUCKET must be a valid S3 bucket name',
  })
  MANGO_S3_BUCKET: string = 'mango';

  /** Largest File (bytes) admitted as a UTF-8 text document in an event (default 1,000,000). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  MANGO_FILES_TEXT_MAX_BYTES: number = 1_000_000;

  /**
   * Non-public addresses webhooks may still reach (tests, private deployments): comma-separated CIDRs,
   * e.g. `127.0.0.0/8,::1/128`. Cloud metadata addresses are refused whatever this says.
   */
  @IsOptional()
  @IsString()
  MANGO_WEBHOOK_ALLOWED_CIDRS?: string;

  /** Older: the webhook secrets key (32 bytes, hex or base64); joins the keyring as key `webhook-legacy`. */
  @IsOptional()
  @IsString()
  MANGO_WEBHOOK_SECRETS_KEY?: string;

  // Temporal (withTemporalEnv), for Deployment cron schedules (Temporal Schedules): optional. Without
  // MANGO_TEMPORAL_ADDRESS Deployments run manually only.

  /** The orchestrator's task queue: scheduled Deployment runs start their workflow there. */
  @IsString()
  @MinLength(1)
  MANGO_TASK_QUEUE: string = 'mango';

  /**
   * The keyring that seals every secret at rest (Vault credentials, webhook signing secrets):
   * comma-separated `id:base64key` entries (32-byte AES-256 keys), the first is active (docs/operator-guide.md,
   * Keyring). Or MANGO_KEYRING_FILE, not both. The older MANGO_VAULT_KEYRING and MANGO_WEBHOOK_SECRETS_KEY
   * join it. Without any, secrets cannot be stored, and the process refuses to start once any exist.
   */
  @IsOptional()
  @IsString()
  MANGO_KEYRING?: string;

  /** A file holding the keyring's entries (one per line or comma-separated, `#` comment lines). */
  @IsOptional()
  @IsString()
  MANGO_KEYRING_FILE?: string;

  /** Older: the Vault keyring (MANGO_KEYRING's format); its keys join the keyring after MANGO_KEYRING's. */
  @IsOptional()
  @IsString()
  MANGO_VAULT_KEYRING?: string;

  /** The built web console served at /console (default: dist/apps/console of this checkout). */
  @IsOptional()
  @IsString()
  @MinLength(1)
  MANGO_CONSOLE_DIR?: string;

  /** Non-public addresses (IPs / CIDRs) that MCP servers and OAuth token endpoints may have (validation). */
  @IsOptional()
  @IsString()
  MANGO_MCP_ALLOWED_ADDRESSES?: string;

  /** How long an Idempotency-Key and its response are kept for replay (hours; default 24, as hosted). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(720)
  MANGO_IDEMPOTENCY_RETENTION_HOURS: number = 24;

  /** How often expired Idempotency-Keys are deleted (seconds; 0 turns pruning off). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(86_400)
  MANGO_IDEMPOTENCY_PRUNE_SECONDS: number = 300;
}
