import { Controller, Get, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { AuditLogService } from './audit-log.service';

/** `GET /v1/audit_log` (Mango addition): Workspace API keys only. */
@Controller('v1/audit_log')
export class AuditLogController {
  constructor(private readonly audit: AuditLogService) {}

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.audit.list(p.workspaceId, query);
  }
}
