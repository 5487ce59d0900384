import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';

/** Every variable apps/orchestrator reads, validated once at boot. */
export class OrchestratorEnv {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @Matches(/^[^\s:]+:\d{1,5}$/, { message: 'MANGO_TEMPORAL_ADDRESS must be host:port' })
  MANGO_TEMPORAL_ADDRESS!: string;

  @IsString()
  @MinLength(1)
  MANGO_TEMPORAL_NAMESPACE: string = 'default';

  @IsString()
  @MinLength(1)
  MANGO_TASK_QUEUE: string = 'mango';

  /** The Anthropic Messages API endpoint (a scripted server in tests). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_MODEL_BASE_URL?: string;

  @IsOptional()
  @IsString()
  MANGO_MODEL_API_KEY?: string;

  /** Operator list prices (usage.list_cost, budgets): JSON, model id → {input, output} USD per million. */
  @IsOptional()
  @IsString()
  MANGO_MODEL_PRICES?: string;

  /** Prompt size (tokens) at which completed turns are compacted into a summary (80% of a 200k window). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  MANGO_COMPACT_AT_TOKENS: number = 160_000;

  /** Turns a Session workflow run takes before it continues as new (bounds history size). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MANGO_SESSION_TURNS_PER_RUN: number = 100;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';

  /** Vault keyring (the same as apps/api's): opens the credentials of MCP servers. */
  @IsOptional()
  @IsString()
  MANGO_VAULT_KEYRING?: string;

  /**
   * IPs / CIDR ranges of MCP servers allowed although they are loopback, private, link-local or metadata
   * addresses (refused by default), e.g. `127.0.0.1/32,::1` for a local stack.
   */
  @IsOptional()
  @IsString()
  MANGO_MCP_ALLOWED_ADDRESSES?: string;

  /** Timeout of each MCP request (tool listing or call), milliseconds. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(600_000)
  MANGO_MCP_TIMEOUT_MS: number = 60_000;
}
