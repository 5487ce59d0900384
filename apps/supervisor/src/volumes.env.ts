import { IsOptional, IsUrl, Matches } from 'class-validator';
import { idPattern } from '@mango/domain-kernel';

/** What `mango-worker volumes list|prune` reads (a Workspace key: the supervisor itself never gets one). */
export class VolumesEnv {
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_BASE_URL!: string;

  @Matches(/^mango_ak_\S+$/, { message: 'MANGO_API_KEY must be a Workspace API key (mango_ak_…)' })
  MANGO_API_KEY!: string;

  @Matches(idPattern('environment'), { message: 'MANGO_ENVIRONMENT_ID must be an env_ id' })
  MANGO_ENVIRONMENT_ID!: string;

  @IsOptional()
  @Matches(/^(unix|tcp):\/\/\S+$/, { message: 'DOCKER_HOST must be unix://… or tcp://…' })
  DOCKER_HOST?: string;

  /** The supervisor's --workspace-root (also `--workspace-root DIR` on the command line). */
  @IsOptional()
  @Matches(/^(\/[^\0]{0,200})?$/, { message: 'MANGO_WORKER_WORKSPACE_ROOT must be an absolute path' })
  MANGO_WORKER_WORKSPACE_ROOT?: string;
}
