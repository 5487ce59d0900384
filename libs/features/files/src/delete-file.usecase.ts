import { Inject, Injectable, Logger } from '@nestjs/common';
import { notFound } from '@mango/domain-kernel';
import { isId } from '@mango/platform-ids';
import { DataSource } from 'typeorm';
import { FileObjects } from './file-objects';
import { FILES_SETTINGS, FilesSettings } from './files.settings';
import { CleanupLease, ObjectCleanupRepository } from './object-cleanup.repository';

export interface DetachedFile {
  id: string;
  objectKey: string;
  lease: CleanupLease;
}

/**
 * `DELETE /v1/files/{file_id}`: one transaction removes the File row and records a leased cleanup
 * intent for its object; then the object and the intent go. A crash after the commit leaves the
 * intent, and a sweeper removes the object when the lease runs out.
 */
@Injectable()
export class DeleteFile {
  private readonly log = new Logger('files');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(FILES_SETTINGS) private readonly settings: FilesSettings,
  ) {}

  async execute(workspaceId: string, fileId: string): Promise<{ id: string; type: 'file_deleted' }> {
    const detached = await this.detach(workspaceId, fileId);
    await this.removeObject(detached);
    return { id: detached.id, type: 'file_deleted' };
  }

  /** Step 1: the File disappears and the intent to remove its object appears, atomically. */
  async detach(workspaceId: string, fileId: string): Promise<DetachedFile> {
    if (!isId('file', fileId)) throw notFound('file', fileId);
    return this.dataSource.transaction(async (tx) => {
      const [row]: Array<{ object_key: string }> = await tx.query(
        `WITH gone AS (DELETE FROM files WHERE id = $1 AND workspace_id = $2 RETURNING object_key)
         SELECT object_key FROM gone`,
        [fileId, workspaceId],
      );
      if (!row) throw notFound('file', fileId);
      const lease = await this.cleanups.register(tx, {
        objectKey: row.object_key,
        reason: 'delete',
        leaseMs: this.settings.leaseMs,
      });
      return { id: fileId, objectKey: row.object_key, lease };
    });
  }

  /** Step 2: remove the object, then the intent. On failure the sweeper finishes it later. */
  async removeObject(detached: DetachedFile): Promise<void> {
    try {
      await this.objects.remove(detached.objectKey);
      await this.cleanups.release(detached.lease);
    } catch (err) {
      this.log.warn(
        `removing the object of deleted file ${detached.id} is left to the sweeper: ${String(err)}`,
      );
    }
  }
}
