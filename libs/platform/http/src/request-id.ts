import { newId } from '@mango/platform-ids';
import type { NextFunction, Request, Response } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    requestId?: string;
  }
}

export const REQUEST_ID_HEADER = 'request-id';

/** Every request gets a `req_` id, echoed in the `request-id` header and in every error envelope. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  assignRequestId(req, res);
  next();
}

/** Mints the request's id and echoes it in the `request-id` header. */
export function assignRequestId(req: Request, res: Response): void {
  const id = newId('request');
  req.requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
}
