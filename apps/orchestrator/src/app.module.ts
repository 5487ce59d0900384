import { DynamicModule, Module } from '@nestjs/common';
import { PersistenceModule, SessionWakes } from '@mango/persistence';
import type { Logger } from 'pino';
import { MangoMetrics, MetricsModule } from '@mango/platform-metrics';
import { DeploymentReconcileService } from './deployment-reconcile.service';
import { OrchestratorEnv } from './orchestrator.env';
import { OutboxRelayService } from './outbox-relay.service';
import { SessionSweeperService } from './session-sweeper.service';
import { WebhookRelayService } from './webhook-relay.service';
import type { TemporalConnector } from '@mango/platform-temporal';
import { LOGGER, ORCHESTRATOR_ENV, TEMPORAL, TemporalWorkerService } from './temporal-worker.service';

@Module({})
export class AppModule {
  static forRoot(
    env: OrchestratorEnv,
    log: Logger,
    metrics: MangoMetrics,
    temporal: TemporalConnector,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        MetricsModule.forRoot(metrics),
        PersistenceModule.forRoot({
          url: env.MANGO_DATABASE_URL,
          poolSize: env.MANGO_DB_POOL_SIZE,
          applicationName: 'mango-orchestrator',
          // A step waiting for a connection is queued, not stuck (it keeps heartbeating); the activity's
          // own timeouts bound it, so the pool's wait is long.
          acquireTimeoutMs: 120_000,
        }),
      ],
      providers: [
        { provide: ORCHESTRATOR_ENV, useValue: env },
        { provide: LOGGER, useValue: log },
        { provide: TEMPORAL, useValue: temporal },
        // One per process: the outbox relay's LISTEN wakes the model steps waiting for tool results.
        { provide: SessionWakes, useValue: new SessionWakes() },
        TemporalWorkerService,
        OutboxRelayService,
        WebhookRelayService,
        DeploymentReconcileService,
        SessionSweeperService,
      ],
    };
  }
}
