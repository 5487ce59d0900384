import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

type Handler = (req: Request, res: Response, next: NextFunction) => void;

/** `POST /v1/files`, `POST /v1/skills` and `POST /v1/skills/{id}/versions`. */
const UPLOAD_ROUTE = /^\/v1\/(files|skills|skills\/[^/?]+\/versions)\/?(\?|$)/;

/**
 * `createHttpApp` parses every request body as JSON (up to 32 MiB) before routing. File uploads must
 * reach their controller unread, to be streamed to the object store, so this makes that parser pass
 * uploads (`POST /v1/files`, Skill bundles) through untouched (the controller refuses anything but multipart/form-data).
 * Fails at boot if the parser cannot be found, rather than buffering uploads silently.
 */
export function streamUploadBodies(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance() as {
    router: { stack: Array<{ name: string; handle: Handler }> };
  };
  const layer = express.router.stack.find((l) => l.name === 'jsonParser');
  if (!layer) throw new Error('apps/files: the JSON body parser was not found; uploads cannot be streamed');
  const parseJson = layer.handle;
  layer.handle = (req, res, next) =>
    req.method === 'POST' && UPLOAD_ROUTE.test(req.url) ? next() : parseJson(req, res, next);
}
