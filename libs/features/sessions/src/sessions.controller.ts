import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, Principal, RechecksWorkspaceKey } from '@mango/feature-auth';
import { SessionsService } from './sessions.service';

type Q = Record<string, unknown>;

/**
 * `/v1/sessions` and their events: Workspace API keys; the Session's own Work token may read the Session
 * and its events and post `user.tool_result`.
 */
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.sessions.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() q: Q) {
    return this.sessions.list(p.workspaceId, q);
  }

  @Get(':sessionId')
  @AllowCredentials('workspace', 'work')
  get(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string) {
    return this.sessions.get(p, id);
  }

  @Post(':sessionId')
  @HttpCode(200)
  update(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string, @Body() body: unknown) {
    return this.sessions.update(p.workspaceId, id, body);
  }

  @Post(':sessionId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string) {
    return this.sessions.archive(p.workspaceId, id);
  }

  @Delete(':sessionId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string) {
    return this.sessions.delete(p.workspaceId, id);
  }

  /** The append re-checks a Workspace key in its own locking statement (lockSessionForAppend). */
  @Post(':sessionId/events')
  @AllowCredentials('workspace', 'work')
  @RechecksWorkspaceKey()
  @HttpCode(200)
  send(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string, @Body() body: unknown) {
    return this.sessions.sendEvents(p, id, body);
  }

  @Get(':sessionId/events')
  @AllowCredentials('workspace', 'work')
  events(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string, @Query() q: Q) {
    return this.sessions.listEvents(p, id, q);
  }
}
