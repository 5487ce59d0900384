import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';

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

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  MANGO_DB_POOL_SIZE: number = 20;
}
