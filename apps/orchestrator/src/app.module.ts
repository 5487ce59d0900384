import { DynamicModule, Module } from '@nestjs/common';
import { PersistenceModule } from '@mango/persistence';
import type { Logger } from 'pino';
import { MangoMetrics, MetricsModule } from '@mango/platform-metrics';
import { OrchestratorEnv } from './orchestrator.env';
import { OutboxRelayService } from './outbox-relay.service';
import { LOGGER, ORCHESTRATOR_ENV, TemporalWorkerService } from './temporal-worker.service';

@Module({})
export class AppModule {
  static forRoot(env: OrchestratorEnv, log: Logger, metrics: MangoMetrics): DynamicModule {
    return {
      module: AppModule,
      imports: [
        MetricsModule.forRoot(metrics),
        PersistenceModule.forRoot({
          url: env.MANGO_DATABASE_URL,
          poolSize: 10,
          applicationName: 'mango-orchestrator',
        }),
      ],
      providers: [
        { provide: ORCHESTRATOR_ENV, useValue: env },
        { provide: LOGGER, useValue: log },
        TemporalWorkerService,
        OutboxRelayService,
      ],
    };
  }
}
