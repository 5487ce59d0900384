import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createDataSource, DatabaseSettings } from './data-source';
import { OutboxRepository, WebhookDeliveryRepository } from './outbox.repository';
import { SandboxEgressRecords } from './sandbox-egress-records';
import { SessionLog } from './session-log.repository';
import { SessionRepository } from './session.repository';
import { SessionThreadRepository } from './session-thread.repository';
import { SESSION_WORK, workItemSessionWork, SessionWorkPort } from './session-work.port';
import { VaultCredentialRepository } from './vault-credential.repository';

/**
 * Provides the app's single initialized DataSource (closed on shutdown) and the aggregate repositories
 * built on it: the Session log, the Session repository, the Thread repository, the outbox and webhook-delivery relays' repositories and the Vault credential repository, with the Work it needs behind `SESSION_WORK` (ADR 0005).
 */
@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  static forRoot(settings: DatabaseSettings): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        {
          provide: DataSource,
          useFactory: async () => createDataSource(settings).initialize(),
        },
        { provide: SESSION_WORK, useValue: workItemSessionWork },
        {
          provide: SessionLog,
          useFactory: (ds: DataSource, work: SessionWorkPort) => new SessionLog(ds, work),
          inject: [DataSource, SESSION_WORK],
        },
        {
          provide: SessionRepository,
          useFactory: (ds: DataSource) => new SessionRepository(ds),
          inject: [DataSource],
        },
        {
          provide: SessionThreadRepository,
          useFactory: (ds: DataSource) => new SessionThreadRepository(ds),
          inject: [DataSource],
        },
        {
          provide: OutboxRepository,
          useFactory: (ds: DataSource) => new OutboxRepository(ds),
          inject: [DataSource],
        },
        {
          provide: WebhookDeliveryRepository,
          useFactory: (ds: DataSource) => new WebhookDeliveryRepository(ds),
          inject: [DataSource],
        },
        {
          provide: VaultCredentialRepository,
          useFactory: (ds: DataSource) => new VaultCredentialRepository(ds),
          inject: [DataSource],
        },
        {
          provide: SandboxEgressRecords,
          useFactory: (ds: DataSource) => new SandboxEgressRecords(ds),
          inject: [DataSource],
        },
      ],
      exports: [
        DataSource,
        SessionLog,
        SessionRepository,
        SessionThreadRepository,
        VaultCredentialRepository,
        OutboxRepository,
        WebhookDeliveryRepository,
        SandboxEgressRecords,
        SESSION_WORK,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
