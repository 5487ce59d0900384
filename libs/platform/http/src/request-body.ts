import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { invalidRequest } from '@mango/domain-kernel';
import type { Request, Response } from 'express';

/**
 * Authenticates a request from its headers alone, before `createHttpApp` reads its body. Provided by the
 * auth feature (`@mango/feature-auth`'s `RequestAuthenticator`), which keeps the rules and puts the
 * principal on the request; `createHttpApp` only asks whether the body may be read. Never rejects for a
 * bad credential: `ok: false` (the route's guard answers 401, or a public route serves).
 */
export interface EarlyAuthenticator {
  authenticateFromHeaders(req: Request): Promise<{ ok: boolean }>;
}

export const EARLY_AUTHENTICATOR = Symbol('EARLY_AUTHENTICATOR');

/**
 * Unread request bodies up to this size are left to Node, which discards them after the response so
 * that the connection can serve the next request; a larger (or unsized, chunked) body is not drained:
 * the response says `Connection: close` and the connection ends with it.
 */
export const UNREAD_BODY_DRAIN_BYTES = 64 * 1024;

/**
 * After answering a request whose large body was left unread, the server half-closes (FIN) and keeps
 * discarding what the client already sent, up to this many bytes or `UNREAD_BODY_LINGER_MS`, before it
 * closes: closing at once with unread bytes makes the kernel send a reset, and a client still writing
 * its body could lose the response it had not read yet (the "lingering close" of HTTP servers).
 */
export const UNREAD_BODY_LINGER_BYTES = 1024 * 1024;
export const UNREAD_BODY_LINGER_MS = 2_000;

/** The request carries body bytes (a positive Content-Length, or Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const h = req.headers;
  if (h['transfer-encoding'] !== undefined) return true;
  const length = h['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * For a request whose body will not be read (no valid credential): nothing parses it. A small one is
 * discarded by Node after the response (the connection is kept); a larger one, or one of unknown size,
 * gets `Connection: close`, and after the response the connection lingers (half-closed, discarding at
 * most `UNREAD_BODY_LINGER_BYTES` for at most `UNREAD_BODY_LINGER_MS`) and closes.
 */
export function leaveBodyUnread(req: Request, res: Response): void {
  if (!hasBody(req)) return;
  const length = Number(req.headers['content-length']);
  if (req.headers['transfer-encoding'] === undefined && length <= UNREAD_BODY_DRAIN_BYTES) return;
  res.setHeader('connection', 'close');
  // Node ends a `Connection: close` response's socket with destroySoon() (FIN, then close at once).
  const socket = req.socket;
  socket.destroySoon = () => lingerThenClose(socket);
}

function lingerThenClose(socket: Socket): void {
  let discarded = 0;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, UNREAD_BODY_LINGER_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > UNREAD_BODY_LINGER_BYTES) close();
  });
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.end();
}

/**
 * Mango accepts uncompressed request bodies only (docs/api-guide.md "Requests"): no SDK compresses a
 * request and the hosted contract defines no request compression, while inflating is where a few KB
 * become a gigabyte. A body with a Content-Encoding other than `identity` is a 400 in the envelope,
 * answered without reading it.
 */
export function refuseContentEncoding(req: IncomingMessage) {
  const coding = req.headers['content-encoding'];
  if (coding === undefined || !hasBody(req)) return undefined;
  const codings = coding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
    .map((c) => c.slice(0, 32));
  if (codings.length === 0) return undefined;
  return invalidRequest(
    `request bodies must not be compressed: Content-Encoding ${codings.slice(0, 3).join(', ')} is not accepted; send the body uncompressed`,
    { field: 'content-encoding', location: 'header', reason: 'content_encoding_unsupported' },
  );
}
