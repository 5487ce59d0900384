import { IsIn, IsOptional, IsString, IsUrl, Matches } from 'class-validator';

/** Every variable `mango-worker docker` reads, validated once at boot. It never reads MANGO_API_KEY. */
export class SupervisorEnv {
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

  @IsString()
  MANGO_BASE_IMAGE: string = 'mango-base:local';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';
}
