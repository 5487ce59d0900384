import { Readable } from 'node:stream';
import type { ObjectStore } from '@mango/adapter-object-store';
import {
  DEFAULT_FILES_SETTINGS,
  FileObjects,
  FilesSettings,
  ObjectCleanupRepository,
  UploadFile,
} from '@mango/feature-files';
import type { McpResultFiles } from '@mango/activities';
import { FileEntity } from '@mango/persistence';
import type { DataSource } from 'typeorm';

/**
 * Large MCP results as Files, through the Files feature's own upload use case (a leased cleanup intent
 * before the first byte, the object, then the File row and the end of the intent in one statement; a
 * failure removes the object, a crash leaves it to the Files sweeper). The File id comes from the call,
 * so a File that already exists is kept and never written twice.
 */
export class McpResultFileStore implements McpResultFiles {
  private readonly uploads: UploadFile;
  private bucket?: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly objectStore: ObjectStore,
    settings: FilesSettings = DEFAULT_FILES_SETTINGS,
  ) {
    this.uploads = new UploadFile(
      dataSource,
      new ObjectCleanupRepository(dataSource),
      new FileObjects(objectStore, settings),
      settings,
    );
  }

  async store(file: { workspaceId: string; fileId: string; filename: string; text: string }): Promise<void> {
    const existing = await this.dataSource.manager.findOne(FileEntity, {
      where: { id: file.fileId, workspaceId: file.workspaceId },
    });
    if (existing) return;
    // The bucket is apps/files'; made here too when the orchestrator writes first (idempotent).
    this.bucket ??= this.objectStore.ensureBucket().catch((err: unknown) => {
      this.bucket = undefined;
      throw err;
    });
    await this.bucket;
    const upload = await this.uploads.begin(file.workspaceId, {
      filename: file.filename,
      mimeType: 'text/plain',
      id: file.fileId,
    });
    try {
      const size = await this.uploads.write(upload, Readable.from([Buffer.from(file.text, 'utf8')]));
      await this.uploads.commit(upload, size);
    } catch (err) {
      await this.uploads.abandon(upload);
      throw err;
    }
  }
}
