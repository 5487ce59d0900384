import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { DeploymentsService } from './deployments.service';

/** `/v1/deployments`: Workspace API keys only. */
@Controller('v1/deployments')
export class DeploymentsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.deployments.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.deployments.list(p.workspaceId, query);
  }

  @Get(':deploymentId')
  get(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string) {
    return this.deployments.get(p.workspaceId, id);
  }

  @Post(':deploymentId')
  @HttpCode(200)
  update(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string, @Body() body: unknown) {
    return this.deployments.update(p.workspaceId, id, body);
  }

  @Post(':deploymentId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string) {
    return this.deployments.archive(p.workspaceId, id);
  }

  @Post(':deploymentId/pause')
  @HttpCode(200)
  pause(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string) {
    return this.deployments.pause(p.workspaceId, id);
  }

  @Post(':deploymentId/unpause')
  @HttpCode(200)
  unpause(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string) {
    return this.deployments.unpause(p.workspaceId, id);
  }

  @Post(':deploymentId/run')
  @HttpCode(201)
  run(@CurrentPrincipal() p: Principal, @Param('deploymentId') id: string) {
    return this.deployments.run(p.workspaceId, id);
  }
}

/** `/v1/deployment_runs`: Workspace API keys only. */
@Controller('v1/deployment_runs')
export class DeploymentRunsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.deployments.listRuns(p.workspaceId, query);
  }

  @Get(':deploymentRunId')
  get(@CurrentPrincipal() p: Principal, @Param('deploymentRunId') id: string) {
    return this.deployments.getRun(p.workspaceId, id);
  }
}
