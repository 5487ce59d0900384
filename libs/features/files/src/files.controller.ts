import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { pipeline } from 'node:stream/promises';
import { CurrentPrincipal, Principal, RechecksWorkspaceKey } from '@mango/feature-auth';
import { IdempotentUpload } from '@mango/feature-idempotency';
import { rejectUnknownQuery } from '@mango/platform-pagination';
import type { Request, Response } from 'express';
import { DeleteFile } from './delete-file.usecase';
import { contentDisposition } from './file-input';
import { FilesService } from './files.service';
import { UploadFile } from './upload-file.usecase';

/** The caller's Workspace key, for the routes that re-check it in their own statement. */
const keyOf = (p: Principal) => (p.kind === 'workspace' ? p.keyId : undefined);

/**
 * `/v1/files`: Workspace API keys only (the guard's default). Upload, metadata and download re-check
 * the key in their own statement, so the guard answers them from its principal cache.
 */
@Controller('v1/files')
export class FilesController {
  constructor(
    @Inject(UploadFile) private readonly uploads: UploadFile,
    @Inject(DeleteFile) private readonly deletes: DeleteFile,
    @Inject(FilesService) private readonly files: FilesService,
  ) {}

  /** The body is read here, as a stream: apps/files keeps the JSON body parser off this route. */
  @Post()
  @HttpCode(201)
  @RechecksWorkspaceKey()
  @IdempotentUpload()
  upload(@CurrentPrincipal() p: Principal, @Req() req: Request, @Query() query: Record<string, unknown>) {
    rejectUnknownQuery(query, []);
    return this.uploads.execute(p.workspaceId, req, keyOf(p));
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.files.list(p.workspaceId, query);
  }

  @Get(':fileId')
  @RechecksWorkspaceKey()
  get(@CurrentPrincipal() p: Principal, @Param('fileId') id: string) {
    return this.files.get(p.workspaceId, id, keyOf(p));
  }

  /** The stored bytes, with the stored content type, as an attachment named after the File. */
  @Get(':fileId/content')
  @RechecksWorkspaceKey()
  async content(@CurrentPrincipal() p: Principal, @Param('fileId') id: string, @Res() res: Response) {
    const { file, body } = await this.files.open(p.workspaceId, id, keyOf(p));
    res.status(200);
    res.setHeader('Content-Type', file.mimeType);
    res.setHeader('Content-Length', String(file.sizeBytes));
    res.setHeader('Content-Disposition', contentDisposition(file.filename));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'private, no-store');
    // A failure mid-stream can only cut the response short (Content-Length tells the client).
    await pipeline(body, res).catch(() => res.destroy());
  }

  @Delete(':fileId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('fileId') id: string) {
    return this.deletes.execute(p.workspaceId, id);
  }
}
