import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { permissionDenied } from '@mango/domain-kernel';
import { EnvironmentsService } from './environments.service';

/**
 * `/v1/environments`: Workspace API keys; an Environment key may also read its own Environment (its
 * supervisor reads `config.networking` at each Session activation, ADR 0021).
 */
@Controller('v1/environments')
export class EnvironmentsController {
  constructor(private readonly environments: EnvironmentsService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.environments.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.environments.list(p.workspaceId, query);
  }

  @Get(':environmentId')
  @AllowCredentials('workspace', 'environment')
  get(@CurrentPrincipal() p: Principal, @Param('environmentId') id: string) {
    if (p.kind === 'environment' && p.environmentId !== id)
      throw permissionDenied('an Environment key reads only its own Environment');
    return this.environments.get(p.workspaceId, id);
  }

  @Post(':environmentId')
  @HttpCode(200)
  update(@CurrentPrincipal() p: Principal, @Param('environmentId') id: string, @Body() body: unknown) {
    return this.environments.update(p.workspaceId, id, body);
  }

  @Post(':environmentId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('environmentId') id: string) {
    return this.environments.archive(p.workspaceId, id);
  }

  @Delete(':environmentId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('environmentId') id: string) {
    return this.environments.delete(p.workspaceId, id);
  }
}
