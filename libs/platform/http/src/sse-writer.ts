import { type IncomingMessage, OutgoingMessage, type ServerResponse } from 'node:http';

/**
 * One Server-Sent Events frame, encoded once however many streams carry it: its bytes, and the same bytes
 * as one HTTP/1.1 chunk (`<size in hex>\r\n<bytes>\r\n`).
 */
export interface SseFrame {
  bytes: Buffer;
  chunk: Buffer;
}

const CRLF = Buffer.from('\r\n', 'latin1');

export function sseFrame(text: string): SseFrame {
  const bytes = Buffer.from(text, 'utf8');
  return {
    bytes,
    chunk: Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF]),
  };
}

/** Writes one frame to an open event stream. */
export type SseWrite = (frame: SseFrame | string) => void;

/**
 * The body writer of one event stream whose headers were just flushed. On a chunked HTTP/1.1 response
 * (every SSE stream but an HTTP/1.0 client's) each frame is written to the socket as its pre-built chunk:
 * one socket write of bytes shared by every stream, instead of `res.write`, which frames each write again
 * per response and defers it to a cork/uncork tick (a fan-out to a thousand streams spent a third of its
 * CPU there). The response still ends through `res.end()`, which writes the last chunk. Anything else — a
 * HEAD request, an unchunked response, a middleware that wraps `res.write` — gets `res.write`.
 */
export function sseWriter(req: IncomingMessage, res: ServerResponse): SseWrite {
  const socket = res.socket;
  const direct =
    req.method === 'GET' &&
    res.headersSent &&
    (res as { chunkedEncoding?: boolean }).chunkedEncoding === true &&
    res.write === OutgoingMessage.prototype.write &&
    socket !== null;
  if (!direct) return (frame) => void res.write(typeof frame === 'string' ? frame : frame.bytes);
  return (frame) => {
    if (res.writableEnded || socket.destroyed) return;
    socket.write(typeof frame === 'string' ? sseFrame(frame).chunk : frame.chunk);
  };
}
