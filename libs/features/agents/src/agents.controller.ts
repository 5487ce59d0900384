import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { AgentsService } from './agents.service';

/** `/v1/agents`: Workspace API keys only. */
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.agents.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.agents.list(p.workspaceId, query);
  }

  @Get(':agentId')
  get(
    @CurrentPrincipal() p: Principal,
    @Param('agentId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.agents.get(p.workspaceId, id, query);
  }

  @Post(':agentId')
  @HttpCode(200)
  update(@CurrentPrincipal() p: Principal, @Param('agentId') id: string, @Body() body: unknown) {
    return this.agents.update(p.workspaceId, id, body);
  }

  @Post(':agentId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('agentId') id: string) {
    return this.agents.archive(p.workspaceId, id);
  }

  @Get(':agentId/versions')
  versions(
    @CurrentPrincipal() p: Principal,
    @Param('agentId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.agents.versions(p.workspaceId, id, query);
  }
}
