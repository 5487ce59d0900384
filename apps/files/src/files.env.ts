import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { withS3CredentialsEnv } from '@mango/adapter-object-store';
import { withAuditEnv } from '@mango/feature-audit';
import { withRequestRateEnv } from '@mango/feature-auth';
import { withJsonLimitsEnv, withServingEnv } from '@mango/platform-http';
import { ObservabilityEnv } from '@mango/platform-tracing';

const MIB = 1024 * 1024;
const TIB = 1024 * 1024 * MIB;

/**
 * Every variable (metrics and tracing: ObservabilityEnv; fair-use request rates: withRequestRateEnv;
 * MANGO_ENV and trusted proxies: withServingEnv; S3 credentials: withS3CredentialsEnv) apps/files reads, validated once at boot.
 */
export class FilesEnv extends withAuditEnv(
  withServingEnv(withJsonLimitsEnv(withRequestRateEnv(withS3CredentialsEnv(ObservabilityEnv)))),
) {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MANGO_FILES_PORT: number = 8082;

  @IsString()
  MANGO_FILES_HOST: string = '127.0.0.1';

  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_S3_ENDPOINT!: string;

  @IsString()
  MANGO_S3_REGION: string = 'us-east-1';

  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message: 'MANGO_S3_BUCKET must be a valid S3 bucket name',
  })
  MANGO_S3_BUCKET: string = 'mango';

  /**
   * `signed` (default): File bytes written to S3 carry their SHA-256 (http) or Content-MD5 (https), so
   * the store verifies them; `unsigned`: UNSIGNED-PAYLOAD, integrity in transit left to TLS / the network.
   */
  @IsIn(['signed', 'unsigned'])
  MANGO_S3_PAYLOAD_SIGNING: 'signed' | 'unsigned' = 'signed';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';

  /** Largest accepted File in bytes (default 500 MiB); larger uploads are 413 `request_too_large`. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(5 * TIB)
  MANGO_FILES_MAX_BYTES: number = 500 * MIB;

  /** Multipart part size for object writes (5 MiB–5 GiB); one part per upload is held in memory. */
  @Type(() => Number)
  @IsInt()
  @Min(5 * MIB)
  @Max(5 * 1024 * MIB)
  MANGO_FILES_PART_BYTES: number = 8 * MIB;

  /** Lease of an upload's (or a sweep's) cleanup intent; uploads renew it every third of this. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  MANGO_FILES_UPLOAD_LEASE_MS: number = 60_000;

  /** How often this process sweeps abandoned cleanup intents; 0 turns the timer off. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  MANGO_FILES_SWEEP_INTERVAL_MS: number = 30_000;

  /** How long past its lease an intent waits before a sweeper claims it. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  MANGO_FILES_SWEEP_GRACE_MS: number = 30_000;

  /** Longest time one request (a large upload) may take; 0 means no limit. Node's default is 5 min. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  MANGO_FILES_REQUEST_TIMEOUT_MS: number = 3_600_000;

  /** How long an idle keep-alive connection stays open. Keep it above your load balancer's idle timeout. */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  MANGO_HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;

  /** Largest Memory content in UTF-8 bytes (hosted: 102,400); larger writes are 413 `request_too_large`. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(16 * MIB)
  MANGO_MEMORY_MAX_CONTENT_BYTES: number = 102_400;

  /** Most Memories one Memory Store holds; creating one more is 409. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  MANGO_MEMORY_MAX_PER_STORE: number = 2000;

  /** Largest accepted Skill bundle (expanded bytes, and compressed archive bytes); 413 beyond it. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(5 * TIB)
  MANGO_SKILLS_MAX_BYTES: number = 500 * MIB;

  /** Most files in one Skill bundle; 400 beyond it. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  MANGO_SKILLS_MAX_FILES: number = 10_000;

  /** How long an Idempotency-Key of a File upload and its response are kept (hours; default 24). */
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
