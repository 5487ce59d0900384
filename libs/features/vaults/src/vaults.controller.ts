import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import { VaultCredentialsService } from './vault-credentials.service';
import { VaultsService } from './vaults.service';

type Query = Record<string, unknown>;

/**
 * `/v1/vaults*`: Workspace API keys only. Environment keys and Work tokens are 403 (a Work token never
 * reaches Vaults; docs/api-guide.md, Vaults); the orchestrator reads credentials directly, never through this API.
 */
@Controller('v1/vaults')
export class VaultsController {
  constructor(
    @Inject(VaultsService) private readonly vaults: VaultsService,
    @Inject(VaultCredentialsService) private readonly credentials: VaultCredentialsService,
  ) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.vaults.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() q: Query) {
    return this.vaults.list(p.workspaceId, q);
  }

  @Get(':vaultId')
  get(@CurrentPrincipal() p: Principal, @Param('vaultId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.vaults.get(p.workspaceId, id);
  }

  @Post(':vaultId')
  @HttpCode(200)
  update(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Body() body: unknown,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.vaults.update(p.workspaceId, id, body);
  }

  @Delete(':vaultId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('vaultId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.vaults.delete(p.workspaceId, id);
  }

  @Post(':vaultId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('vaultId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.vaults.archive(p.workspaceId, id);
  }

  @Post(':vaultId/credentials')
  @HttpCode(201)
  createCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Body() body: unknown,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.create(p.workspaceId, id, body);
  }

  @Get(':vaultId/credentials')
  listCredentials(@CurrentPrincipal() p: Principal, @Param('vaultId') id: string, @Query() q: Query) {
    return this.credentials.list(p.workspaceId, id, q);
  }

  @Get(':vaultId/credentials/:credentialId')
  getCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Param('credentialId') credentialId: string,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.get(p.workspaceId, id, credentialId);
  }

  @Post(':vaultId/credentials/:credentialId')
  @HttpCode(200)
  updateCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Param('credentialId') credentialId: string,
    @Body() body: unknown,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.update(p.workspaceId, id, credentialId, body);
  }

  @Delete(':vaultId/credentials/:credentialId')
  @HttpCode(200)
  deleteCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Param('credentialId') credentialId: string,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.delete(p.workspaceId, id, credentialId);
  }

  @Post(':vaultId/credentials/:credentialId/archive')
  @HttpCode(200)
  archiveCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Param('credentialId') credentialId: string,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.archive(p.workspaceId, id, credentialId);
  }

  @Post(':vaultId/credentials/:credentialId/mcp_oauth_validate')
  @HttpCode(200)
  validateCredential(
    @CurrentPrincipal() p: Principal,
    @Param('vaultId') id: string,
    @Param('credentialId') credentialId: string,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.credentials.validate(p.workspaceId, id, credentialId);
  }
}
