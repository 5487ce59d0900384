import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { SandboxEgressService } from './sandbox-egress.service';

/** Sandbox egress records (ADR 0021, docs/api-guide.md "Sandbox egress"). */
@Controller('v1')
export class SandboxEgressController {
  constructor(private readonly egress: SandboxEgressService) {}

  /** The supervisor's report for one Session Work item: its own Environment key only. */
  @Post('environments/:environmentId/work/:workId/egress_records')
  @HttpCode(200)
  @AllowCredentials('environment')
  report(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') environmentId: string,
    @Param('workId') workId: string,
    @Body() body: unknown,
  ) {
    return this.egress.report(p, environmentId, workId, body);
  }

  /** A Session's records, oldest first: Workspace API keys. */
  @Get('sessions/:sessionId/egress_records')
  list(
    @CurrentPrincipal() p: Principal,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.egress.list(p.workspaceId, sessionId, query);
  }
}
