import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

/** Every variable apps/api reads, validated once at boot. */
export class ApiEnv {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MANGO_API_PORT: number = 8081;

  @IsString()
  MANGO_API_HOST: string = '127.0.0.1';

  /** The base URL workers use to reach the API (it goes into each Work secret as api_base_url). */
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

  // Object storage (the same store and bucket as apps/files): optional. With it, event admission can read
  // File-sourced text documents (FILE_TEXT_READER); without it, File documents are refused.

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_S3_ENDPOINT?: string;

  @ValidateIf((e: ApiEnv) => e.MANGO_S3_ENDPOINT !== undefined)
  @IsString()
  @MinLength(1)
  MANGO_S3_ACCESS_KEY?: string;

  @ValidateIf((e: ApiEnv) => e.MANGO_S3_ENDPOINT !== undefined)
  @IsString()
  @MinLength(1)
  MANGO_S3_SECRET_KEY?: string;

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
   * Vault keyring: comma-separated `id:base64key` entries (32-byte AES-256 keys), the first is active.
   * Without it Vault credentials cannot be stored, and the process refuses to start once any exist.
   */
  @IsOptional()
  @IsString()
  MANGO_VAULT_KEYRING?: string;

  /** Non-public addresses (IPs / CIDRs) that MCP servers and OAuth token endpoints may have (validation). */
  @IsOptional()
  @IsString()
  MANGO_MCP_ALLOWED_ADDRESSES?: string;
}
