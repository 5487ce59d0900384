import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { MangoMetrics, MetricsModule } from '@mango/platform-metrics';
import { DockerSupervisorService, LOGGER, SUPERVISOR_ENV } from './docker-supervisor.service';
import { SupervisorEnv } from './supervisor.env';

@Module({})
export class AppModule {
  static forRoot(env: SupervisorEnv, log: Logger, metrics: MangoMetrics): DynamicModule {
    return {
      module: AppModule,
      imports: [MetricsModule.forRoot(metrics)],
      providers: [
        { provide: SUPERVISOR_ENV, useValue: env },
        { provide: LOGGER, useValue: log },
        DockerSupervisorService,
      ],
    };
  }
}
