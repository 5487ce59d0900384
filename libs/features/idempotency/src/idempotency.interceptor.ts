import {
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { REQUEST_ID_HEADER } from '@mango/platform-http';
import {
  IdempotencyKeys,
  IdempotencyScope,
  joinRequestTransactions,
  runInRequestTransaction,
} from '@mango/persistence';
import type { Principal } from '@mango/feature-auth';
import type { Request, Response } from 'express';
import { catchError, from, lastValueFrom, Observable, of } from 'rxjs';
import { DataSource } from 'typeorm';
import {
  IDEMPOTENCY_IN_PROGRESS_RETRY_AFTER_S,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyInProgress,
  idempotencyKeyReused,
  parseIdempotencyKey,
  requestDigest,
} from './idempotency-key';
import { IDEMPOTENCY_SETTINGS, IdempotencySettings } from './idempotency.settings';
import { IDEMPOTENT_BY_PROTOCOL } from './idempotent-by-protocol.decorator';
import { openResponse, SEALED_REPLAY, sealResponse } from './sealed-replay';
import {
  attachUploadIdempotency,
  IDEMPOTENT_UPLOAD,
  IdempotentReplay,
  UploadIdempotency,
} from './upload-idempotency';

/**
 * `Idempotency-Key` on every POST (docs/api-guide.md, "Idempotent requests"). Runs after the guards, so
 * the key is scoped to the caller's Workspace and credential kind. The whole request runs in one
 * transaction that every statement of the handler joins (`runInRequestTransaction`); it begins by taking
 * the key's lock and reading the key, and ends by recording the key with the response, so the key and
 * the write it protects commit together or not at all:
 * - a key already recorded for the same request: its response is replayed (status, body, the original
 *   `request-id`, `idempotent-replayed: true`) and the handler does not run;
 * - recorded for another request (method, path, query or body): 409 `idempotency_key_reused`;
 * - held by a request still running: 409 `idempotency_in_progress` with `retry-after`, at once (no
 *   connection is held waiting);
 * - a request that fails (any error) rolls back with its writes and leaves no key: sending it again runs it.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
  ) {
    joinRequestTransactions(dataSource);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { principal?: Principal }>();
    const header = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (req.method !== 'POST' || header === undefined || !req.principal) return next.handle();
    const handler = context.getHandler();
    if (Reflect.getMetadata(IDEMPOTENT_BY_PROTOCOL, handler) === true) return next.handle();
    const upload = Reflect.getMetadata(IDEMPOTENT_UPLOAD, handler) === true;
    if (!upload && this.settings.routes === 'uploads') return next.handle();
    const key = parseIdempotencyKey(header);
    const res = http.getResponse<Response>();
    const status = this.routeStatus(context);
    const scope: IdempotencyScope = {
      workspaceId: req.principal.workspaceId,
      credentialKind: req.principal.kind,
      key,
    };
    if (upload) {
      const handle = new UploadIdempotency(
        this.dataSource,
        scope,
        req,
        res,
        status,
        this.settings.retentionMs,
      );
      attachUploadIdempotency(req, handle);
      return next.handle().pipe(
        catchError((err: unknown) => {
          if (err instanceof IdempotentReplay) return of(handle.replay(err.first));
          throw err;
        }),
      );
    }
    const sealed = Reflect.getMetadata(SEALED_REPLAY, handler) === true;
    return from(this.run(scope, req, res, status, next, sealed));
  }

  private async run(
    scope: IdempotencyScope,
    req: Request,
    res: Response,
    status: number,
    next: CallHandler,
    sealed: boolean,
  ): Promise<unknown> {
    const keyring = this.settings.keyring ?? null;
    const path = req.originalUrl;
    const digest = requestDigest(req.method, path, req.body);
    return runInRequestTransaction(this.dataSource, async (tx) => {
      if (!(await IdempotencyKeys.tryLock(tx, scope))) {
        res.setHeader('retry-after', String(IDEMPOTENCY_IN_PROGRESS_RETRY_AFTER_S));
        throw idempotencyInProgress();
      }
      const now = new Date();
      const first = await IdempotencyKeys.find(tx, scope, now);
      if (first) {
        if (first.requestDigest !== digest)
          throw idempotencyKeyReused({ method: first.requestMethod, path: first.requestPath });
        res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
        res.setHeader(REQUEST_ID_HEADER, first.requestId);
        return (sealed ? openResponse(keyring, scope, first.responseBody) : first.responseBody) ?? undefined;
      }
      // Called here, inside the request transaction's async context, so that the handler runs in it.
      const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
      const at = new Date();
      await IdempotencyKeys.remember(
        tx,
        scope,
        {
          requestDigest: digest,
          requestMethod: req.method,
          requestPath: path,
          requestId: req.requestId ?? '',
          responseStatus: status,
          // A once-shown secret in the response is kept sealed, never in clear.
          responseBody: sealed ? sealResponse(keyring, scope, body) : body,
        },
        at,
        new Date(at.getTime() + this.settings.retentionMs),
      );
      return body;
    });
  }

  /** The status Nest answers the route with (`@HttpCode`, else 201 for POST). */
  private routeStatus(context: ExecutionContext): number {
    const code: unknown = Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler());
    return typeof code === 'number' ? code : HttpStatus.CREATED;
  }
}
