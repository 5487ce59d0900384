import { DynamicModule, Module } from '@nestjs/common';
import { SessionsModule } from '@mango/feature-sessions';
import { DeploymentScheduler } from './deployment-scheduler';
import { DeploymentRunsController, DeploymentsController } from './deployments.controller';
import { DEPLOYMENT_SCHEDULER, DeploymentsService } from './deployments.service';

@Module({})
export class DeploymentsModule {
  /** `scheduler`: Temporal Schedules for cron Deployments; null = manual runs only. */
  static forRoot(options: { scheduler: DeploymentScheduler | null }): DynamicModule {
    return {
      module: DeploymentsModule,
      imports: [SessionsModule],
      controllers: [DeploymentsController, DeploymentRunsController],
      providers: [{ provide: DEPLOYMENT_SCHEDULER, useValue: options.scheduler }, DeploymentsService],
      exports: [DeploymentsService],
    };
  }
}
