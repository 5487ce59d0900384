import { Inject, Injectable } from '@nestjs/common';
import { addAbortSignal, Readable } from 'node:stream';
import { ObjectStore } from '@mango/adapter-object-store';
import { fileTooLarge } from './file-input';
import { FILES_SETTINGS, FilesSettings } from './files.settings';

const S3_MAX_PARTS = 10_000;

/**
 * File bytes in the object store (minio client). Writes stream a source in parts of `partBytes`, so at
 * most one part is held in memory whatever the File's size: a source that fits in one part is a single
 * PUT, anything larger a multipart upload that is aborted if anything fails.
 */
@Injectable()
export class FileObjects {
  private readonly partBytes: number;

  constructor(
    @Inject(ObjectStore) private readonly store: ObjectStore,
    @Inject(FILES_SETTINGS) settings: Pick<FilesSettings, 'partBytes' | 'maxBytes'>,
  ) {
    // S3 allows 10,000 parts: grow the part size when the size limit needs it.
    this.partBytes = Math.max(settings.partBytes, Math.ceil(settings.maxBytes / (S3_MAX_PARTS - 1)));
  }

  /**
   * Streams `source` into `key`. Resolves with the number of bytes written once the object is
   * complete. `signal` aborts the write (the source is destroyed, a multipart upload is aborted); a
   * source longer than `maxBytes` fails with 413.
   */
  async write(
    key: string,
    source: Readable,
    opts: { contentType: string; maxBytes?: number; signal?: AbortSignal },
  ): Promise<number> {
    const { client, bucket } = this.store;
    const headers = { 'Content-Type': opts.contentType };
    if (opts.signal) addAbortSignal(opts.signal, source);
    let uploadId: string | undefined;
    const etags: Array<{ part: number; etag: string }> = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let total = 0;
    const flushPart = async () => {
      const body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      uploadId ??= await client.initiateNewMultipartUpload(bucket, key, headers);
      const part = etags.length + 1;
      const { etag } = await client.uploadPart(
        { bucketName: bucket, objectName: key, uploadID: uploadId, partNumber: part, headers: {} },
        body,
      );
      etags.push({ part, etag });
    };
    try {
      // Pulling one chunk at a time: while a part uploads, the source (and the request) is paused.
      for await (const chunk of source as AsyncIterable<Buffer>) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        total += chunk.length;
        if (opts.maxBytes !== undefined && total > opts.maxBytes) throw fileTooLarge(opts.maxBytes);
        if (pendingBytes >= this.partBytes) await flushPart();
      }
      opts.signal?.throwIfAborted();
      if (uploadId === undefined) {
        await client.putObject(bucket, key, Buffer.concat(pending, pendingBytes), pendingBytes, headers);
      } else {
        if (pendingBytes > 0) await flushPart();
        opts.signal?.throwIfAborted();
        await client.completeMultipartUpload(bucket, key, uploadId, etags);
      }
      return total;
    } catch (e) {
      if (uploadId !== undefined)
        await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw e;
    }
  }

  /** The object's bytes; rejects with `NoSuchKey` when it is missing. */
  open(key: string): Promise<Readable> {
    return this.store.client.getObject(this.store.bucket, key);
  }

  /** Removes the object and any unfinished multipart upload to it. Missing objects are not an error. */
  async remove(key: string): Promise<void> {
    const { client, bucket } = this.store;
    // Normally at most one (an upload that died mid-way); bounded in case the store misbehaves.
    for (let i = 0; i < 10; i++) {
      const uploadId = await client.findUploadId(bucket, key);
      if (uploadId === undefined) break;
      await client.abortMultipartUpload(bucket, key, uploadId);
    }
    await client.removeObject(bucket, key);
  }

  /** Whether the object exists (tests and diagnostics). */
  async exists(key: string): Promise<boolean> {
    try {
      await this.store.client.statObject(this.store.bucket, key);
      return true;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'NotFound' || code === 'NoSuchKey') return false;
      throw e;
    }
  }
}

export const isMissingObject = (e: unknown): boolean => {
  const code = (e as { code?: string } | null)?.code;
  return code === 'NoSuchKey' || code === 'NotFound';
};
