import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { pipeline } from 'node:stream/promises';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { IdempotentUpload } from '@mango/feature-idempotency';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import type { Request, Response } from 'express';
import { contentDisposition } from '../file-input';
import { SKILL_ARCHIVE_CONTENT_TYPE } from './skill-archive';
import { SkillsService } from './skills.service';
import { UploadSkill } from './upload-skill.usecase';

/**
 * `/v1/skills`: Workspace API keys; a Session's Work token may also read (metadata and archive) the
 * exact versions its Session pinned. Uploads are read here as streams (apps/files keeps the JSON body
 * parser off them).
 */
@Controller('v1/skills')
export class SkillsController {
  constructor(
    @Inject(UploadSkill) private readonly uploads: UploadSkill,
    @Inject(SkillsService) private readonly skills: SkillsService,
  ) {}

  @Post()
  @HttpCode(201)
  @IdempotentUpload()
  create(@CurrentPrincipal() p: Principal, @Req() req: Request, @Query() query: Record<string, unknown>) {
    rejectUnknownQuery(query, []);
    return this.uploads.createSkill(p.workspaceId, req);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.skills.list(p.workspaceId, query);
  }

  @Get(':skillId')
  get(@CurrentPrincipal() p: Principal, @Param('skillId') id: string) {
    return this.skills.get(p.workspaceId, id);
  }

  @Delete(':skillId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('skillId') id: string) {
    return this.skills.deleteSkill(p.workspaceId, id);
  }

  @Post(':skillId/versions')
  @HttpCode(201)
  @IdempotentUpload()
  createVersion(
    @CurrentPrincipal() p: Principal,
    @Param('skillId') id: string,
    @Req() req: Request,
    @Query() query: Record<string, unknown>,
  ) {
    rejectUnknownQuery(query, []);
    return this.uploads.createVersion(p.workspaceId, id, req);
  }

  @Get(':skillId/versions')
  listVersions(
    @CurrentPrincipal() p: Principal,
    @Param('skillId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.skills.listVersions(p.workspaceId, id, query);
  }

  @Get(':skillId/versions/:version')
  @AllowCredentials('workspace', 'work')
  getVersion(
    @CurrentPrincipal() p: Principal,
    @Param('skillId') id: string,
    @Param('version') version: string,
    @Query() query: Record<string, unknown>,
  ) {
    rejectUnknownQuery(query, []);
    return this.skills.getVersion(p, id, version);
  }

  @Delete(':skillId/versions/:version')
  @HttpCode(200)
  deleteVersion(
    @CurrentPrincipal() p: Principal,
    @Param('skillId') id: string,
    @Param('version') version: string,
  ) {
    return this.skills.deleteVersion(p.workspaceId, id, version);
  }

  /** The version's archive: a gzip-compressed tar whose members start with the bundle's directory. */
  @Get(':skillId/versions/:version/content')
  @AllowCredentials('workspace', 'work')
  async content(
    @CurrentPrincipal() p: Principal,
    @Param('skillId') id: string,
    @Param('version') version: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ) {
    rejectUnknownQuery(query, []);
    const { version: v, body } = await this.skills.openVersion(p, id, version);
    res.status(200);
    res.setHeader('Content-Type', SKILL_ARCHIVE_CONTENT_TYPE);
    res.setHeader('Content-Length', String(v.archiveSizeBytes));
    res.setHeader('Content-Disposition', contentDisposition(`${v.directory}-${v.version}.tar.gz`));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'private, no-store');
    await pipeline(body, res).catch(() => res.destroy());
  }
}
