import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { IdempotentUpload, uploadIdempotencyOf } from '@mango/feature-idempotency';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import { MemoriesService } from './memories.service';
import { MemoryStoresService } from './memory-stores.service';
import { MemoryVersionsService } from './memory-versions.service';

type Query = Record<string, unknown>;

/**
 * `/v1/memory_stores*`. Workspace keys reach everything in their Workspace. A Session's Work token reaches
 * the Stores attached to its Session: Store get, Memory list/get, and (through `read_write` attachments,
 * under its live lease) Memory create/update/delete. Environment keys: 403.
 */
@Controller('v1/memory_stores')
export class MemoryStoresController {
  constructor(
    @Inject(MemoryStoresService) private readonly stores: MemoryStoresService,
    @Inject(MemoriesService) private readonly memories: MemoriesService,
    @Inject(MemoryVersionsService) private readonly versions: MemoryVersionsService,
  ) {}

  // ── Stores ──
  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.stores.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() q: Query) {
    return this.stores.list(p.workspaceId, q);
  }

  @Get(':memoryStoreId')
  @AllowCredentials('workspace', 'work')
  get(@CurrentPrincipal() p: Principal, @Param('memoryStoreId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.stores.get(p, id);
  }

  @Post(':memoryStoreId')
  @HttpCode(200)
  update(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Body() body: unknown,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.stores.update(p, id, body);
  }

  @Post(':memoryStoreId/archive')
  @HttpCode(200)
  archive(@CurrentPrincipal() p: Principal, @Param('memoryStoreId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.stores.archive(p, id);
  }

  @Delete(':memoryStoreId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('memoryStoreId') id: string, @Query() q: Query) {
    rejectUnknownQuery(q, []);
    return this.stores.delete(p, id);
  }

  // ── Memories ──
  // Memory writes commit their Idempotency-Key with their final statement (the content's object is put
  // under a cleanup intent first): @IdempotentUpload, as File and Skill uploads.
  @Post(':memoryStoreId/memories')
  @HttpCode(201)
  @AllowCredentials('workspace', 'work')
  @IdempotentUpload()
  createMemory(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Body() body: unknown,
    @Query() q: Query,
    @Req() req: object,
  ) {
    return this.memories.create(p, id, q, body, uploadIdempotencyOf(req));
  }

  @Get(':memoryStoreId/memories')
  @AllowCredentials('workspace', 'work')
  listMemories(@CurrentPrincipal() p: Principal, @Param('memoryStoreId') id: string, @Query() q: Query) {
    return this.memories.list(p, id, q);
  }

  @Get(':memoryStoreId/memories/:memoryId')
  @AllowCredentials('workspace', 'work')
  getMemory(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Param('memoryId') memoryId: string,
    @Query() q: Query,
  ) {
    return this.memories.get(p, id, memoryId, q);
  }

  @Post(':memoryStoreId/memories/:memoryId')
  @HttpCode(200)
  @AllowCredentials('workspace', 'work')
  @IdempotentUpload()
  updateMemory(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Param('memoryId') memoryId: string,
    @Body() body: unknown,
    @Query() q: Query,
    @Req() req: object,
  ) {
    return this.memories.update(p, id, memoryId, q, body, uploadIdempotencyOf(req));
  }

  @Delete(':memoryStoreId/memories/:memoryId')
  @HttpCode(200)
  @AllowCredentials('workspace', 'work')
  deleteMemory(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Param('memoryId') memoryId: string,
    @Query() q: Query,
  ) {
    return this.memories.delete(p, id, memoryId, q);
  }

  // ── Versions ──
  @Get(':memoryStoreId/memory_versions')
  listVersions(@CurrentPrincipal() p: Principal, @Param('memoryStoreId') id: string, @Query() q: Query) {
    return this.versions.list(p, id, q);
  }

  @Get(':memoryStoreId/memory_versions/:memoryVersionId')
  getVersion(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Param('memoryVersionId') versionId: string,
    @Query() q: Query,
  ) {
    return this.versions.get(p, id, versionId, q);
  }

  @Post(':memoryStoreId/memory_versions/:memoryVersionId/redact')
  @HttpCode(200)
  redact(
    @CurrentPrincipal() p: Principal,
    @Param('memoryStoreId') id: string,
    @Param('memoryVersionId') versionId: string,
    @Query() q: Query,
  ) {
    rejectUnknownQuery(q, []);
    return this.versions.redact(p, id, versionId);
  }
}
