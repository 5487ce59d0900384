import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pipeline, Transform, type Readable } from 'node:stream';
import { unauthenticated } from '@mango/domain-kernel';
import { liveWorkspaceKey } from '@mango/feature-auth';
import { uploadIdempotencyOf } from '@mango/feature-idempotency';
import { newId } from '@mango/platform-ids';
import { FileEntity } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { fileObjectKey, parseFilename, parseMimeType } from './file-input';
import { FileObjects } from './file-objects';
import { FileView, renderFile } from './file.view';
import { FILES_SETTINGS, FilesSettings } from './files.settings';
import { CleanupLeaseKeeper, LeaseLostError } from './cleanup-lease-keeper';
import { readMultipartFile } from './multipart-file';
import { CleanupLease, ObjectCleanupRepository } from './object-cleanup.repository';

/** An upload between its cleanup intent and its commit. */
export interface PendingUpload {
  file: FileEntity;
  lease: CleanupLease;
  /** Renews the lease from registration until the commit (or the abandon) ends it. */
  keeper: CleanupLeaseKeeper;
}

/**
 * `POST /v1/files`. The steps, each safe to crash after:
 * 1. `begin`: a leased cleanup intent for the new object key is committed before any byte is written;
 * 2. the bytes stream to the object store while a CleanupLeaseKeeper renews that lease;
 * 3. `commit`: one statement deletes the intent (only if the lease is still ours) and inserts the File;
 * on any failure, `abandon` removes the object and the intent. A crash leaves the intent, whose lease
 * runs out, and a sweeper removes the object.
 */
@Injectable()
export class UploadFile {
  private readonly log = new Logger('files');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(FILES_SETTINGS) private readonly settings: FilesSettings,
  ) {}

  /** `keyId`: the caller's Workspace key, re-checked by the commit (`RechecksWorkspaceKey`). */
  async execute(workspaceId: string, req: IncomingMessage, keyId?: string): Promise<FileView> {
    const form = readMultipartFile(req, { maxBytes: this.settings.maxBytes });
    // With an Idempotency-Key, the File row commits with the key (docs/api-guide.md, "Idempotent requests").
    const idempotency = uploadIdempotencyOf(req);
    let upload: PendingUpload | undefined;
    try {
      const part = await form.file;
      const filename = parseFilename(part.filename);
      const mimeType = parseMimeType(part.mimeType);
      upload = await this.begin(workspaceId, { filename, mimeType });
      const pending = upload;
      if (!idempotency) {
        // Under the lease until the whole form is read: nothing but the one part, and a proper end.
        const size = await this.write(upload, part.stream, form.done);
        return renderFile(await this.commit(upload, size, keyId));
      }
      const content = createHash('sha256');
      const size = await this.write(upload, digesting(part.stream, content), form.done);
      const parts = { filename, mime_type: mimeType, sha256: content.digest('hex') };
      return await idempotency.commit(parts, async () => renderFile(await this.commit(pending, size, keyId)));
    } catch (err) {
      form.abort(err);
      if (upload) await this.abandon(upload);
      // A refused form (400/413) explains the failure better than what it broke downstream.
      throw form.failure ?? err;
    }
  }

  /**
   * Step 1: mint the File id (or take the caller's, for a File whose id is derived from what it stores,
   * e.g. an MCP call's result) and commit a leased cleanup intent for its object key.
   */
  async begin(
    workspaceId: string,
    input: { filename: string; mimeType: string; id?: string },
  ): Promise<PendingUpload> {
    const createdAt = new Date();
    const id = input.id ?? newId('file', createdAt.getTime());
    const file = this.dataSource.manager.create(FileEntity, {
      id,
      workspaceId,
      filename: input.filename,
      mimeType: input.mimeType,
      sizeBytes: 0,
      objectKey: fileObjectKey(workspaceId, id),
      createdAt,
    });
    const lease = await this.cleanups.register(this.dataSource.manager, {
      objectKey: file.objectKey,
      reason: 'upload',
      leaseMs: this.settings.leaseMs,
    });
    // Renewed from here to the commit: a loaded database can delay the commit past a lease, and a
    // sweeper would then take a live upload's intent (and the request would fail for nothing).
    return {
      file,
      lease,
      keeper: new CleanupLeaseKeeper(this.cleanups, lease, this.settings.leaseMs, this.log),
    };
  }

  /**
   * Step 2: stream the bytes into the object, then wait for `settled` (the rest of the request), all
   * the while renewing the lease; a lost lease aborts the write.
   */
  async write(upload: PendingUpload, source: Readable, settled?: Promise<unknown>): Promise<number> {
    const { keeper } = upload;
    try {
      const size = await this.objects.write(upload.file.objectKey, source, {
        contentType: upload.file.mimeType,
        maxBytes: this.settings.maxBytes,
        signal: keeper.signal,
      });
      await settled;
      return size;
    } catch (err) {
      throw keeper.signal.aborted ? keeper.signal.reason : err;
    }
  }

  /**
   * Step 3: the File row and the end of the intent commit together, only while the lease is ours (and,
   * given `keyId`, while that Workspace key is unrevoked) — as one statement (one round trip, atomic by
   * itself): the insert happens only if the delete found the row with our owner. A revoked key is 401
   * and leaves the intent in place for `abandon`.
   */
  async commit(upload: PendingUpload, sizeBytes: number, keyId?: string): Promise<FileEntity> {
    const file = { ...upload.file, sizeBytes } as FileEntity;
    // The lease is renewed until this statement has run (a renewal after it finds no row: harmless).
    const [row]: Array<{ key_live: boolean; id: string | null }> = await this.dataSource
      .query(
        `WITH caller AS (SELECT ($10::text IS NULL OR ${liveWorkspaceKey('$10')}) AS live),
       released AS (
         DELETE FROM object_cleanups
          WHERE id = $1 AND lease_owner = $2 AND (SELECT live FROM caller) RETURNING 1),
       inserted AS (
         INSERT INTO files (id, workspace_id, filename, mime_type, size_bytes, object_key, created_at)
         SELECT $3, $4, $5, $6, $7, $8, $9 FROM released
         RETURNING id)
       SELECT (SELECT live FROM caller) AS key_live, (SELECT id FROM inserted) AS id`,
        [
          upload.lease.id,
          upload.lease.owner,
          file.id,
          file.workspaceId,
          file.filename,
          file.mimeType,
          file.sizeBytes,
          file.objectKey,
          file.createdAt,
          keyId ?? null,
        ],
      )
      .finally(() => upload.keeper.stop());
    if (!row?.key_live) throw unauthenticated('invalid or revoked credential');
    if (!row.id) throw new LeaseLostError(upload.lease);
    return file;
  }

  /**
   * After a failure: remove whatever was written and the intent. If a sweeper took the intent over
   * (we stalled past the lease), a new intent covers our own removal first — the object may have been
   * completed after the sweeper removed it. Anything that fails here is left to the sweeper.
   */
  async abandon(upload: PendingUpload): Promise<void> {
    await upload.keeper.stop();
    try {
      let lease = upload.lease;
      if (!(await this.cleanups.renew(lease, this.settings.leaseMs))) {
        lease = await this.cleanups.register(this.dataSource.manager, {
          objectKey: upload.file.objectKey,
          reason: 'upload',
          leaseMs: this.settings.leaseMs,
        });
      }
      await this.objects.remove(upload.file.objectKey);
      await this.cleanups.release(lease);
    } catch (err) {
      this.log.warn(`cleanup of failed upload ${upload.file.id} is left to the sweeper: ${String(err)}`);
    }
  }
}

/** `source` as it passes through `hash` (errors travel on: the returned stream fails with the source's). */
function digesting(source: Readable, hash: ReturnType<typeof createHash>): Readable {
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  pipeline(source, tap, () => undefined);
  return tap;
}
