import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { invalidRequest, notFound, unauthenticated } from '@mango/domain-kernel';
import { liveWorkspaceKey } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import { FileEntity } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { fileObjectKey } from './file-input';
import { FileObjects, isMissingObject } from './file-objects';
import { FileView, renderFile } from './file.view';

const noop = () => undefined;

interface FileRow {
  key_live: boolean;
  id: string | null;
  workspace_id: string;
  filename: string;
  mime_type: string;
  size_bytes: string;
  object_key: string;
  created_at: Date;
}
const CURSOR = { scope: 'files', order: 'desc' as const };

/** Reading Files: list, metadata and bytes, always within the caller's Workspace. */
@Injectable()
export class FilesService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(FileObjects) private readonly objects: FileObjects,
  ) {}

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<FileView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    const qb = this.dataSource.manager
      .createQueryBuilder(FileEntity, 'f')
      .where('f.workspace_id = :workspaceId', { workspaceId })
      .orderBy('f.id', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string')
      qb.andWhere('f.id < :after', { after: decodeCursor(query.page, CURSOR).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (f) => f.id, renderFile, CURSOR);
  }

  /** `keyId`: the caller's Workspace key, re-checked in the same statement (`RechecksWorkspaceKey`). */
  async get(workspaceId: string, fileId: string, keyId?: string): Promise<FileView> {
    return renderFile(await this.find(workspaceId, fileId, keyId));
  }

  /**
   * The File and a stream of its bytes. A File deleted in the meantime is 404. The object is opened
   * while its row is looked up (its key follows from the Workspace and the id), so a download waits for
   * one round trip, not two; the row still decides: no row (or a revoked `keyId`), no bytes.
   */
  async open(
    workspaceId: string,
    fileId: string,
    keyId?: string,
  ): Promise<{ file: FileEntity; body: Readable }> {
    if (!isId('file', fileId)) throw notFound('file', fileId);
    const key = fileObjectKey(workspaceId, fileId);
    let opening = this.objects.open(key);
    opening.catch(noop);
    const file = await this.find(workspaceId, fileId, keyId).catch((err: unknown) => {
      void opening.then((body) => body.destroy(), noop);
      throw err;
    });
    if (file.objectKey !== key) {
      void opening.then((body) => body.destroy(), noop);
      opening = this.objects.open(file.objectKey);
    }
    try {
      return { file, body: await opening };
    } catch (err) {
      if (isMissingObject(err) && !(await this.exists(workspaceId, fileId))) throw notFound('file', fileId);
      throw err;
    }
  }

  /** The File, in one statement that also re-checks `keyId` when given (revoked: 401, before 404). */
  private async find(workspaceId: string, fileId: string, keyId?: string): Promise<FileEntity> {
    if (!isId('file', fileId)) throw notFound('file', fileId);
    if (keyId === undefined) {
      const file = await this.dataSource.manager.findOne(FileEntity, { where: { id: fileId, workspaceId } });
      if (!file) throw notFound('file', fileId);
      return file;
    }
    const [row]: FileRow[] = await this.dataSource.query(
      `SELECT ${liveWorkspaceKey('$3')} AS key_live,
              f.id, f.workspace_id, f.filename, f.mime_type, f.size_bytes, f.object_key, f.created_at
         FROM (SELECT 1) AS one
         LEFT JOIN files f ON f.id = $1 AND f.workspace_id = $2`,
      [fileId, workspaceId, keyId],
    );
    if (!row?.key_live) throw unauthenticated('invalid or revoked credential');
    if (row.id === null) throw notFound('file', fileId);
    return this.dataSource.manager.create(FileEntity, {
      id: row.id,
      workspaceId: row.workspace_id,
      filename: row.filename,
      mimeType: row.mime_type,
      sizeBytes: Number(row.size_bytes),
      objectKey: row.object_key,
      createdAt: row.created_at,
    });
  }

  private exists(workspaceId: string, fileId: string): Promise<boolean> {
    return this.dataSource.manager.exists(FileEntity, { where: { id: fileId, workspaceId } });
  }
}
