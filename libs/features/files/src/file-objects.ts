import { Inject, Injectable } from '@nestjs/common';
import { createHash, type Hash } from 'node:crypto';
import { addAbortSignal, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ObjectStore, PayloadChecksum } from '@mango/adapter-object-store';
import { fileTooLarge } from './file-input';
import { FILES_SETTINGS, FilesSettings } from './files.settings';

const S3_MAX_PARTS = 10_000;
/** How far a request body stream reads ahead of the socket (bytes). */
const BODY_READ_AHEAD = 64 * 1024;

const noop = () => undefined;
const sanitizeEtag = (etag: string | undefined) =>
  etag?.replace(/^"|"$/g, '').replace(/^&quot;|&quot;$/g, '');

/**
 * The bytes of one S3 request body as they arrive: kept as the chunks they came in (never concatenated)
 * and hashed on the way in, so sending needs neither a copy nor a second pass over the bytes.
 */
class PartBody {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  private readonly hash: Hash | undefined;

  /** `sha256`: minio signs the payload's hash (plain http); `md5`: Content-MD5; `none`: unsigned. */
  constructor(readonly checksum: PayloadChecksum) {
    this.hash = checksum === 'none' ? undefined : createHash(checksum);
  }

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    this.hash?.update(chunk);
  }

  digest(): { sha256: string; headers: Record<string, string | number> } {
    const headers: Record<string, string | number> = { 'Content-Length': this.bytes };
    if (this.checksum === 'sha256') return { sha256: this.hash!.digest('hex'), headers };
    if (this.checksum === 'md5') headers['Content-MD5'] = this.hash!.digest('base64');
    return { sha256: '', headers };
  }
}

/** A PUT whose body is being sent. */
interface Sending {
  done: Promise<void>;
  body: Readable;
  settled: boolean;
}

/**
 * File bytes in the object store (minio client). Writes stream a source in parts of `partBytes`; a
 * source that fits in one part is a single PUT, anything larger a multipart upload that is aborted if
 * anything fails. While one part is sent, the next is read, but the bytes held in memory (received and
 * not yet handed to the socket, across both) stay within `partBytes` plus one chunk, whatever the
 * File's size.
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
    const checksum = this.store.payloadChecksum;
    const contentType = { 'Content-Type': opts.contentType };
    if (opts.signal) addAbortSignal(opts.signal, source);
    let uploadId: string | undefined;
    const etags: Array<{ part: number; etag: string }> = [];
    let total = 0;
    // Bytes received and not yet pulled by a request: the memory this upload holds.
    let held = 0;
    let pulled: (() => void) | undefined;
    let sending: Sending | undefined;

    /** PUTs `part` (the object itself, or part n of the multipart upload), releasing chunks as they go out. */
    const put = (part: PartBody, partNumber?: number): Sending => {
      const query = partNumber === undefined ? undefined : `uploadId=${uploadId}&partNumber=${partNumber}`;
      const { sha256, headers } = part.digest();
      const body = Readable.from(
        (function* () {
          for (let c = part.chunks.shift(); c; c = part.chunks.shift()) {
            held -= c.length;
            pulled?.();
            yield c;
          }
        })(),
        { objectMode: false, highWaterMark: BODY_READ_AHEAD },
      );
      const done = (async () => {
        const res = await this.store.streamClient.makeRequestStreamAsync(
          {
            method: 'PUT',
            bucketName: bucket,
            objectName: key,
            query,
            headers: { ...headers, ...(query ? {} : contentType) },
          },
          body,
          sha256,
          [200],
          '',
        );
        const etag = sanitizeEtag(res.headers.etag);
        res.resume();
        await finished(res);
        return etag;
      })()
        .then((etag) => {
          if (partNumber === undefined) return;
          if (!etag)
            throw new Error(`the object store answered part ${partNumber} of ${key} without an ETag`);
          etags.push({ part: partNumber, etag });
        })
        .finally(() => (request.settled = true));
      const request: Sending = { done, body, settled: false };
      done.catch(noop);
      return request;
    };
    const putPart = async (part: PartBody) => {
      uploadId ??= await client.initiateNewMultipartUpload(bucket, key, contentType);
      return put(part, etags.length + 1);
    };
    const stopSending = (reason: unknown) =>
      sending?.body.destroy(reason instanceof Error ? reason : undefined);
    const onAbort = () => stopSending(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    let part = new PartBody(checksum);
    try {
      // Pulling one chunk at a time: while memory is full, the source (and the request) is paused.
      for await (const chunk of source as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (opts.maxBytes !== undefined && total > opts.maxBytes) throw fileTooLarge(opts.maxBytes);
        part.add(chunk);
        held += chunk.length;
        if (part.bytes >= this.partBytes) {
          // One part request at a time (S3 parts are numbered in order of sending).
          await sending?.done;
          sending = await putPart(part);
          part = new PartBody(checksum);
        }
        while (sending && !sending.settled && held >= this.partBytes) {
          const wait = new Promise<void>((resolve) => (pulled = resolve));
          await Promise.race([wait, sending.done]);
          pulled = undefined;
        }
      }
      opts.signal?.throwIfAborted();
      if (uploadId === undefined && !sending) {
        sending = put(part);
        await sending.done;
      } else {
        await sending?.done;
        if (part.bytes > 0) {
          sending = await putPart(part);
          await sending.done;
        }
        opts.signal?.throwIfAborted();
        await client.completeMultipartUpload(bucket, key, uploadId!, etags);
      }
      return total;
    } catch (e) {
      // No part may land after the abort: the request in flight is cut and waited for first.
      stopSending(e);
      await sending?.done.catch(noop);
      if (uploadId !== undefined)
        await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw e;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
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
