import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { invalidRequest } from '@mango/domain-kernel';
import { assertStorableText } from '@mango/platform-http';
import { fileTooLarge } from './file-input';

/** The form's `file` part: its declared name and type, and its bytes as they arrive. */
export interface FilePart {
  filename: string | undefined;
  mimeType: string;
  /** Fails with the reason the form was refused (a DomainError for 400/413), never a parser error. */
  stream: Readable;
}

export interface MultipartForm {
  /** The `file` part, as soon as its headers arrived; rejects (400) when the form has none. */
  file: Promise<FilePart>;
  /** Resolves once the whole form was read and held exactly the one `file` part. */
  done: Promise<void>;
  /** Why the form was refused, once it was. */
  readonly failure: unknown;
  /** Stops reading: the `file` stream fails with `reason`, the rest of the body is drained unread. */
  abort(reason: unknown): void;
}

/** Room for the multipart framing around the File when comparing Content-Length with the limit. */
const FRAMING_ALLOWANCE = 64 * 1024;
/**
 * How much of the File is parsed ahead of its consumer (bytes): enough that a small File is read
 * while the upload's cleanup intent is being committed, and that large ones move in few, large hops.
 */
const READ_AHEAD = 1024 * 1024;
const PARSER_BUFFER = 256 * 1024;

const noop = () => undefined;
const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * Reads a `multipart/form-data` request that carries exactly one part, `file`, without buffering it:
 * the part's bytes are handed over as a stream (backpressure reaches the socket). Wrong content types,
 * malformed bodies, extra parts and a missing `file` are 400; a File over `maxBytes` is 413 — as soon
 * as Content-Length shows it, otherwise when the limit is crossed.
 */
export function readMultipartFile(req: IncomingMessage, opts: { maxBytes: number }): MultipartForm {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType))
    throw invalidRequest('upload a File as multipart/form-data with one part named "file"');
  const length = Number(req.headers['content-length']);
  if (Number.isFinite(length) && length > opts.maxBytes + FRAMING_ALLOWANCE)
    throw fileTooLarge(opts.maxBytes);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      highWaterMark: PARSER_BUFFER,
      fileHwm: PARSER_BUFFER,
      // busboy reports `limit` when a file *reaches* fileSize: one more byte means "over the limit".
      limits: { fileSize: opts.maxBytes + 1, files: 1, fieldSize: 1024 },
    });
  } catch (e) {
    throw invalidRequest(`malformed multipart/form-data request: ${(e as Error).message}`);
  }

  let failure: unknown;
  let bytes: PassThrough | undefined;
  let settleFile!: { resolve: (p: FilePart) => void; reject: (e: unknown) => void };
  let settleDone!: { resolve: () => void; reject: (e: unknown) => void };
  const file = new Promise<FilePart>((resolve, reject) => (settleFile = { resolve, reject }));
  const done = new Promise<void>((resolve, reject) => (settleDone = { resolve, reject }));
  // The caller awaits what it needs; a rejection nobody awaited is not a process-level error.
  file.catch(noop);
  done.catch(noop);

  const fail = (reason: unknown) => {
    if (failure !== undefined) return;
    failure = reason;
    settleFile.reject(reason);
    settleDone.reject(reason);
    bytes?.destroy(asError(reason));
    req.unpipe(parser);
    // Discard the rest of the body so the response can still be delivered on this connection.
    req.resume();
    // Not synchronously: busboy may be inside its own callback (e.g. emitting `limit`).
    setImmediate(() => parser.destroy());
  };

  parser.on('file', (name, stream, info) => {
    stream.on('error', (err: Error) =>
      fail(invalidRequest(`malformed multipart/form-data body: ${err.message}`)),
    );
    if (failure !== undefined) return void stream.resume();
    if (name !== 'file') {
      stream.resume();
      return fail(invalidRequest(`unexpected part "${name}": the form has one part, named "file"`));
    }
    try {
      assertStorableText(info.filename, 'file.filename');
    } catch (e) {
      stream.resume();
      return fail(e);
    }
    // The consumer reads `bytes`: it carries busboy's data, but only the errors chosen here.
    bytes = new PassThrough({ highWaterMark: READ_AHEAD });
    bytes.on('error', noop);
    stream.on('limit', () => fail(fileTooLarge(opts.maxBytes)));
    stream.pipe(bytes);
    settleFile.resolve({ filename: info.filename, mimeType: info.mimeType, stream: bytes });
  });
  parser.on('field', (name, value) => {
    try {
      assertStorableText(name, 'form part name');
      assertStorableText(value, name);
    } catch (e) {
      return fail(e);
    }
    fail(
      invalidRequest(
        name === 'file'
          ? 'the "file" part needs a filename (Content-Disposition: form-data; name="file"; filename="…")'
          : `unexpected field "${name}": the form has one part, named "file"`,
      ),
    );
  });
  parser.on('filesLimit', () => fail(invalidRequest('the form may carry only one "file" part')));
  parser.on('error', (err: Error) =>
    fail(invalidRequest(`malformed multipart/form-data body: ${err.message}`)),
  );
  parser.on('close', () => {
    if (failure !== undefined) return;
    if (!bytes) return fail(invalidRequest('the form has no "file" part'));
    settleDone.resolve();
  });
  const interrupted = () => invalidRequest('the request body ended before the form was complete');
  req.on('error', () => fail(interrupted()));
  req.on('close', () => {
    if (!req.complete) fail(interrupted());
  });
  req.pipe(parser);
  return {
    file,
    done,
    get failure() {
      return failure;
    },
    abort: fail,
  };
}
