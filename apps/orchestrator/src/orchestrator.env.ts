import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';
import { ObservabilityEnv } from '@mango/platform-tracing';

/** Every variable (metrics and tracing: ObservabilityEnv) apps/orchestrator reads, validated once at boot. */
export class OrchestratorEnv extends ObservabilityEnv {
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
}
