import type { ServerResponse } from 'node:http';
import { ExpressAdapter } from '@nestjs/platform-express';

/** Statuses whose response carries no body (Express's `res.send` strips it for these). */
const BODILESS_STATUS = new Set([204, 205, 304]);

/**
 * Nest's Express adapter, answering a handler's plain JSON object (or array) the way Express's `res.json`
 * does — `application/json; charset=utf-8`, `JSON.stringify` with no replacer or spacing, a
 * Content-Length — written straight to the response. Express's path parsed and re-formatted the
 * Content-Type twice (mime-types, then content-type for the charset) and ran `res.send`'s freshness and
 * status machinery on every response; profiling Poll and Ack showed it as a sizeable share of the API's
 * CPU per request. Everything else (no body, strings, Buffers, StreamableFile, errors, a Content-Type the
 * handler set, HEAD, bodiless statuses) keeps Nest's own reply.
 */
export class JsonReplyExpressAdapter extends ExpressAdapter {
  override reply(
    response: ServerResponse & { req?: { method?: string } },
    body: unknown,
    statusCode?: number,
  ) {
    if (
      !isPlainJson(body) ||
      response.getHeader('content-type') !== undefined ||
      response.req?.method === 'HEAD'
    )
      return super.reply(response, body, statusCode);
    const status = statusCode ?? response.statusCode;
    if (BODILESS_STATUS.has(status)) return super.reply(response, body, statusCode);
    const text = JSON.stringify(body);
    response.statusCode = status;
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.setHeader('content-length', Buffer.byteLength(text));
    response.end(text);
    return response;
  }
}

function isPlainJson(body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false;
  if (Array.isArray(body)) return true;
  const proto = Object.getPrototypeOf(body);
  return proto === Object.prototype || proto === null;
}
