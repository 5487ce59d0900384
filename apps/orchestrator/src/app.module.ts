import { DynamicModule, Module } from '@nestjs/common';
import { PersistenceModule } from '@mango/persistence';
import type { Logger } from 'pino';
import { OrchestratorEnv } from './orchestrator.env';
import { OutboxRelayService } from './outbox-relay.service';
import { WebhookRelayService } from './webhook-relay.service';
import { LOGGER, ORCHESTRATOR_ENV, TemporalWorkerService } from './temporal-worker.service';

@Module({})
export class AppModule {
  static forRoot(env: OrchestratorEnv, log: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
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
        WebhookRelayService,
      ],
    };
  }
}
