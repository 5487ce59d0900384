import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { DockerSupervisorService, LOGGER, SUPERVISOR_ENV } from './docker-supervisor.service';
import { SupervisorEnv } from './supervisor.env';

@Module({})
export class AppModule {
  static forRoot(env: SupervisorEnv, log: Logger): DynamicModule {
    return {
      module: AppModule,
      providers: [
        { provide: SUPERVISOR_ENV, useValue: env },
        { provide: LOGGER, useValue: log },
        DockerSupervisorService,
      ],
    };
  }
}
