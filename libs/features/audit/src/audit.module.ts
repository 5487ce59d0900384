import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AuditInterceptor } from './audit.interceptor';
import { AuditLogController } from './audit-log.controller';
import { AuditLogService } from './audit-log.service';
import { AuditPruner } from './audit-pruner';
import { AUDIT_SETTINGS, AuditSettings } from './audit.env';

/**
 * The audit log: every write through the app recorded (an interceptor), its retention (a pruner) and, with
 * `serveApi`, `GET /v1/audit_log` (apps/api; apps/files records its uploads and deletes without serving it).
 */
@Module({})
export class AuditModule {
  static forRoot(settings: AuditSettings & { serveApi: boolean }): DynamicModule {
    return {
      module: AuditModule,
      controllers: settings.serveApi ? [AuditLogController] : [],
      providers: [
        { provide: AUDIT_SETTINGS, useValue: settings },
        { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
        AuditPruner,
        AuditLogService,
      ],
      exports: [AuditPruner],
    };
  }
}
