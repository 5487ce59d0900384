import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { SessionsService } from './sessions.service';

type Q = Record<string, unknown>;

/** `/v1/sessions` and their events: Workspace API keys (Work-token access arrives with the agent loop). */
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
  get(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string) {
    return this.sessions.get(p.workspaceId, id);
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

  @Post(':sessionId/events')
  @HttpCode(200)
  send(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string, @Body() body: unknown) {
    return this.sessions.sendEvents(p.workspaceId, id, body);
  }

  @Get(':sessionId/events')
  events(@CurrentPrincipal() p: Principal, @Param('sessionId') id: string, @Query() q: Q) {
    return this.sessions.listEvents(p.workspaceId, id, q);
  }
}
