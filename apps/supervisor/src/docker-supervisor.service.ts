import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createDockerClient, engineInfo } from '@mango/adapter-docker';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { SupervisorEnv } from './supervisor.env';

export const SUPERVISOR_ENV = Symbol('SUPERVISOR_ENV');
export const LOGGER = Symbol('LOGGER');
const ENGINE_CHECK_INTERVAL_MS = 15_000;

/**
 * The Docker supervisor. This milestone connects to the engine and reports it; claiming Work and
 * running item containers arrive with the supervisor milestone.
 */
@Injectable()
export class DockerSupervisorService implements OnApplicationBootstrap, OnApplicationShutdown {
  private watch?: NodeJS.Timeout;
  private engineUp = true;

  constructor(
    @Inject(SUPERVISOR_ENV) private readonly env: SupervisorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const docker = createDockerClient(this.env.DOCKER_HOST);
    const info = await engineInfo(docker);
    this.log.info(
      {
        docker_version: info.version,
        docker_api_version: info.apiVersion,
        environment_id: this.env.MANGO_ENVIRONMENT_ID,
        base_url: this.env.MANGO_BASE_URL,
      },
      'docker engine connected',
    );
    this.watch = setInterval(() => void this.checkEngine(docker), ENGINE_CHECK_INTERVAL_MS);
  }

  /** Reports engine loss and recovery (the Work loop pauses claims while the engine is down). */
  private async checkEngine(docker: Docker): Promise<void> {
    const up = await docker.ping().then(
      () => true,
      () => false,
    );
    if (up !== this.engineUp)
      this.log[up ? 'info' : 'error'](
        { docker_host: this.env.DOCKER_HOST ?? 'default' },
        up ? 'docker engine reachable again' : 'docker engine unreachable',
      );
    this.engineUp = up;
  }

  onApplicationShutdown(): void {
    if (this.watch) clearInterval(this.watch);
  }
}
