import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { ObservabilityEnv } from '@mango/platform-tracing';

/** Every variable (metrics and tracing: ObservabilityEnv) `mango-worker docker` reads, validated once at boot. It never reads MANGO_API_KEY. */
export class SupervisorEnv extends ObservabilityEnv {
  @Matches(/^mango_ek_[A-Za-z0-9_-]{43}$/, {
    message: 'MANGO_ENVIRONMENT_KEY must be an Environment key (mango_ek_…)',
  })
  MANGO_ENVIRONMENT_KEY!: string;

  @Matches(/^env_[0-9A-HJKMNP-TV-Z]{26}$/, { message: 'MANGO_ENVIRONMENT_ID must be an env_ id' })
  MANGO_ENVIRONMENT_ID!: string;

  /** Where the supervisor reaches the Mango API. */
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_BASE_URL!: string;

  /** Where sandboxed containers reach the Mango API (defaults to MANGO_BASE_URL; host network). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_DOCKER_BASE_URL?: string;

  /** unix:///path/docker.sock or tcp://host:port; the default socket when unset. */
  @IsOptional()
  @Matches(/^(unix|tcp):\/\/\S+$/, { message: 'DOCKER_HOST must be unix://… or tcp://…' })
  DOCKER_HOST?: string;

  /** The sandbox image: bash, node and the Mango item runner (/opt/mango). */
  @IsString()
  MANGO_WORKER_IMAGE: string = 'mango-base:v2';

  /** Development only: bind-mount this source tree read-only at /opt/mango instead of baking it in. */
  @IsOptional()
  @Matches(/^\//, { message: 'MANGO_WORKER_SOURCE_DIR must be an absolute path' })
  MANGO_WORKER_SOURCE_DIR?: string;

  /** Container network: host (reach the API on 127.0.0.1) or none. Never a private-range bridge by default. */
  @IsString()
  MANGO_WORKER_NETWORK: string = 'host';

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(64)
  MANGO_MAX_CONCURRENT_ITEMS: number = 4;

  /** Identifies this supervisor's containers for startup reconciliation (default: hostname + Environment). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.-]{1,128}$/)
  MANGO_SUPERVISOR_ID?: string;

  /** A Session activation ends (final Stop) this long after the Session went idle. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  MANGO_SESSION_IDLE_MS: number = 60_000;

  /** The lease TTL item runners ask for; they renew at a third of it (seed 002: at most 300 s). */
  @Type(() => Number)
  @IsInt()
  @Min(3)
  @Max(300)
  MANGO_WORK_TTL_SECONDS: number = 60;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';
}
