import { SetMetadata } from '@nestjs/common';
import { REQUEST_ID_HEADER } from '@mango/platform-http';
import {
  IdempotencyKeys,
  IdempotencyScope,
  RememberedRequest,
  runInRequestTransaction,
} from '@mango/persistence';
import type { Request, Response } from 'express';
import type { DataSource } from 'typeorm';
import {
  IDEMPOTENCY_IN_PROGRESS_RETRY_AFTER_S,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyInProgress,
  idempotencyKeyReused,
  requestDigest,
} from './idempotency-key';

export const IDEMPOTENT_UPLOAD = 'mango:idempotent-upload';

/**
 * Marks a route whose use case commits its key itself, at the end of its write, through the request's
 * {@link UploadIdempotency} (`uploadIdempotencyOf(req)`): a streamed upload (Files, Skills: the body is
 * not parsed before the handler) or a Memory write, whose writes span an object-store put and several
 * transactions by design (a cleanup intent committed before the object is written).
 */
export const IdempotentUpload = () => SetMetadata(IDEMPOTENT_UPLOAD, true);

/** Thrown by {@link UploadIdempotency.commit} when the key already answered the same upload. */
export class IdempotentReplay extends Error {
  constructor(readonly first: RememberedRequest) {
    super('replayed');
  }
}

/**
 * The Idempotency-Key of one streamed upload request. The upload runs as usual (its cleanup intent, its
 * bytes to the object store); only its final statement runs in `commit`, in one transaction with the
 * key's lock, the key's read and the key's record — so the upload's row and its key commit together.
 * A repeat of a committed upload throws {@link IdempotentReplay} there (the use case abandons its own
 * copy, as after any failure; the interceptor answers the first response); another upload under the key
 * is 409 idempotency_key_reused; one still running, 409 idempotency_in_progress.
 */
export class UploadIdempotency {
  constructor(
    private readonly dataSource: DataSource,
    private readonly scope: IdempotencyScope,
    private readonly req: Request,
    private readonly res: Response,
    private readonly status: number,
    private readonly retentionMs: number,
  ) {}

  /**
   * Before a write whose request is known up front (a Memory write's JSON body): a key that already
   * answered this request throws {@link IdempotentReplay}, one recorded for another request is 409
   * idempotency_key_reused — so a repeat is answered before checks the first request's write would now
   * fail (the path it created is taken) and before anything is stored. `commit` checks again under the
   * key's lock.
   */
  async precheck(parts: unknown): Promise<void> {
    const first = await IdempotencyKeys.find(this.dataSource.manager, this.scope, new Date());
    if (!first) return;
    if (first.requestDigest !== this.digest(parts))
      throw idempotencyKeyReused({ method: first.requestMethod, path: first.requestPath });
    throw new IdempotentReplay(first);
  }

  private digest(parts: unknown): string {
    return requestDigest(this.req.method, this.req.originalUrl, parts);
  }

  /**
   * `parts`: what identifies the upload's content (its parts' names, types and digests), known once the
   * body was read. `write` is the upload's final statement; its result is the response body.
   */
  async commit<T>(parts: unknown, write: () => Promise<T>): Promise<T> {
    const path = this.req.originalUrl;
    const digest = this.digest(parts);
    return runInRequestTransaction(this.dataSource, async (tx) => {
      if (!(await IdempotencyKeys.tryLock(tx, this.scope))) {
        this.res.setHeader('retry-after', String(IDEMPOTENCY_IN_PROGRESS_RETRY_AFTER_S));
        throw idempotencyInProgress();
      }
      const now = new Date();
      const first = await IdempotencyKeys.find(tx, this.scope, now);
      if (first) {
        if (first.requestDigest !== digest)
          throw idempotencyKeyReused({ method: first.requestMethod, path: first.requestPath });
        throw new IdempotentReplay(first);
      }
      const body = await write();
      await IdempotencyKeys.remember(
        tx,
        this.scope,
        {
          requestDigest: digest,
          requestMethod: this.req.method,
          requestPath: path,
          requestId: this.req.requestId ?? '',
          responseStatus: this.status,
          responseBody: body,
        },
        now,
        new Date(now.getTime() + this.retentionMs),
      );
      return body;
    });
  }

  /** Answers a replay: the first response's body, with its request-id and the replay header. */
  replay(first: RememberedRequest): unknown {
    this.res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
    this.res.setHeader(REQUEST_ID_HEADER, first.requestId);
    return first.responseBody ?? undefined;
  }
}

const HANDLES = new WeakMap<object, UploadIdempotency>();

export function attachUploadIdempotency(req: Request, handle: UploadIdempotency): void {
  HANDLES.set(req, handle);
}

/** The request's upload idempotency, when the client sent a key on an `@IdempotentUpload()` route. */
export function uploadIdempotencyOf(req: object): UploadIdempotency | undefined {
  return HANDLES.get(req);
}
