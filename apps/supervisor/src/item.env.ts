import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { idPattern } from '@mango/domain-kernel';

/** How the item runner learns its Work. */
export class ItemModeEnv {
  /**
   * `stdin` in a pooled container (docs/operator-guide.md "Warm pool"): the Work id, Environment and type
   * arrive with the secret as one assignment line on stdin after the Ack, not in the environment.
   */
  @IsOptional()
  @IsIn(['stdin'])
  MANGO_ITEM_ASSIGNMENT?: 'stdin';
}

/** What every item runner knows before its Work: where Mango is (a pooled runner's whole environment). */
export class ItemSandboxEnv extends ItemModeEnv {
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_BASE_URL!: string;

  /** The Work API socket the supervisor mounted (a sealed sandbox reaches Mango only through it). */
  @IsOptional()
  @Matches(/^\/[^\0]{1,100}$/)
  MANGO_API_SOCKET?: string;
}

/** The narrow, non-secret identity of one Work item inside its container (the item runner's `handleItem`; docs/operator-guide.md, The Docker supervisor). */
export class ItemEnv extends ItemSandboxEnv {
  @Matches(idPattern('work'))
  MANGO_WORK_ID!: string;

  @Matches(idPattern('environment'))
  MANGO_ENVIRONMENT_ID!: string;

  @IsIn(['session', 'healthcheck'])
  MANGO_WORK_TYPE!: 'session' | 'healthcheck';

  @IsOptional()
  @Matches(idPattern('session'))
  MANGO_SESSION_ID?: string;

  /** Session Work: end the activation this long after the Session went idle. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  MANGO_SESSION_IDLE_MS?: number;

  /** Session Work: calls of different Threads that may run at once (docs/worker-contract.md; default 1). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(16)
  MANGO_MAX_CONCURRENT_CALLS?: number;

  /** The Work lease TTL the runner asks for (see docs/operator-guide.md, The Docker supervisor: 1–300 s). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(3)
  MANGO_WORK_TTL_SECONDS?: number;

  /**
   * The operator custom tools this worker serves, as the supervisor validated them (JSON; not secret).
   * docs/operator-guide.md "Operator custom tools".
   */
  @IsOptional()
  @IsString()
  MANGO_CUSTOM_TOOLS?: string;

  /** Passed on to the Bash tool's shell (its environment is an allowlist). */
  @IsOptional()
  @IsString()
  PATH?: string;

  @IsOptional()
  @IsString()
  HOME?: string;

  /**
   * The supervisor's egress proxy socket (ADR 0021), set only when the Environment allows egress: the
   * runner forwards 127.0.0.1:MANGO_EGRESS_PROXY_PORT to it and gives the shell the proxy variables.
   */
  @IsOptional()
  @Matches(/^\/[^\0]{1,100}$/)
  MANGO_EGRESS_SOCKET?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(65535)
  MANGO_EGRESS_PROXY_PORT: number = 3128;

  /** Set by the launcher; the healthcheck probe refuses to run without it. */
  @IsOptional()
  @IsIn(['docker'])
  MANGO_SANDBOX?: string;
}
