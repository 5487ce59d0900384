import { DynamicModule, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { AuthModule, fairUseSettingsFrom, FairUseModule } from '@mango/feature-auth';
import { FilesModule } from '@mango/feature-files';
import { AuditModule, auditSettingsFrom } from '@mango/feature-audit';
import { IdempotencyModule } from '@mango/feature-idempotency';
import { MemoryModule } from '@mango/feature-memory';
import { WorkTokenAuthModule } from '@mango/feature-work';
import { HealthController, READINESS_CHECKS, ReadinessCheck } from '@mango/platform-http';
import { PersistenceModule } from '@mango/persistence';
import { MangoMetrics, MetricsModule } from '@mango/platform-metrics';
import { FilesEnv } from './files.env';

@Module({})
export class AppModule {
  static forRoot(env: FilesEnv, store: ObjectStore, metrics: MangoMetrics): DynamicModule {
    const objectStoreCheck: ReadinessCheck = { name: 'object_store', check: () => store.ping() };
    return {
      module: AppModule,
      imports: [
        MetricsModule.forRoot(metrics),
        PersistenceModule.forRoot({ url: env.MANGO_DATABASE_URL, applicationName: 'mango-files' }),
        AuthModule,
        // Request rates per credential and per Workspace (uploads included): after the auth guard.
        FairUseModule.forRoot(fairUseSettingsFrom(env)),
        // Work tokens are resolved (so a live one is 403 where it has no access, a dead one 401).
        WorkTokenAuthModule,
        // Every write recorded in the audit log once its response finished (after the auth guard).
        AuditModule.forRoot({ ...auditSettingsFrom(env), serveApi: false }),
        // Idempotency-Key on File uploads only (@IdempotentUpload: the upload commits its key itself).
        IdempotencyModule.forRoot({
          retentionMs: env.MANGO_IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
          pruneIntervalMs: env.MANGO_IDEMPOTENCY_PRUNE_SECONDS * 1_000,
          routes: 'uploads',
        }),
        FilesModule.forRoot({
          store,
          settings: {
            maxBytes: env.MANGO_FILES_MAX_BYTES,
            partBytes: env.MANGO_FILES_PART_BYTES,
            leaseMs: env.MANGO_FILES_UPLOAD_LEASE_MS,
            sweepIntervalMs: env.MANGO_FILES_SWEEP_INTERVAL_MS,
            sweepGraceMs: env.MANGO_FILES_SWEEP_GRACE_MS,
          },
          skills: { maxBytes: env.MANGO_SKILLS_MAX_BYTES, maxFiles: env.MANGO_SKILLS_MAX_FILES },
        }),
        MemoryModule.forRoot({
          store,
          settings: {
            maxContentBytes: env.MANGO_MEMORY_MAX_CONTENT_BYTES,
            maxMemoriesPerStore: env.MANGO_MEMORY_MAX_PER_STORE,
            leaseMs: env.MANGO_FILES_UPLOAD_LEASE_MS,
          },
        }),
      ],
      controllers: [HealthController],
      providers: [{ provide: READINESS_CHECKS, useValue: [objectStoreCheck] }],
    };
  }
}
