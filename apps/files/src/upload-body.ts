import type { Request } from 'express';

/** `POST /v1/files`, `POST /v1/skills` and `POST /v1/skills/{id}/versions`. */
const UPLOAD_ROUTE = /^\/v1\/(files|skills|skills\/[^/?]+\/versions)\/?(\?|$)/;

/**
 * `createHttpApp` parses every request body as JSON (up to 32 MiB) before routing. File uploads must
 * reach their controller unread, to be streamed to the object store, so `createHttpApp`'s JSON parser
 * passes these (`POST /v1/files`, Skill bundles) through untouched (`streamedBody`; the controller
 * refuses anything but multipart/form-data).
 */
export const isUploadRequest = (req: Request): boolean => req.method === 'POST' && UPLOAD_ROUTE.test(req.url);
