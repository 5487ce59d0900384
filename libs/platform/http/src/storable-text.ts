import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { invalidRequest } from '@mango/domain-kernel';
import { newId } from '@mango/platform-ids';
import type { NextFunction, Request, Response } from 'express';

/**
 * Text PostgreSQL cannot store. `text` columns refuse U+0000 (`invalid byte sequence … 0x00`) and
 * `jsonb` refuses `\u0000` (`unsupported Unicode escape sequence`); an unpaired UTF-16 surrogate is
 * refused by `jsonb` and silently turned into U+FFFD by the UTF-8 encoder for `text` (lossy). Mango
 * refuses both at the edge, in one place for every route, with a 400 naming the field — instead of a
 * 500 from the database (or a silently altered value).
 */
export type UnstorableReason = 'nul_character' | 'lone_surrogate' | 'invalid_utf8';
export type TextLocation = 'body' | 'query' | 'path' | 'header' | 'form';

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL cannot store `s`, or undefined when it can. */
export function unstorableReason(s: string): UnstorableReason | undefined {
  if (NUL.test(s)) return 'nul_character';
  if (LONE_SURROGATE.test(s)) return 'lone_surrogate';
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `a.b`, `a[0]`, `a["x y"]` — keys that are not identifiers are JSON-quoted (so always printable). */
function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

export interface UnstorableText {
  /** JSON path of the offending value (or of the object whose key offends), e.g. `events[0].content[0].text`. */
  field: string;
  reason: UnstorableReason;
}

/** A value still to visit, and how it was reached (its path is built only for the one that offends). */
interface Visit {
  value: unknown;
  parent: Visit | undefined;
  key: string | number;
}

function pathOf(visit: Visit | undefined, root: string, key?: string): string {
  const keys: Array<string | number> = key === undefined ? [] : [key];
  for (let v = visit; v?.parent !== undefined; v = v.parent) keys.push(v.key);
  let path = root;
  for (let i = keys.length - 1; i >= 0; i--) path = child(path, keys[i]!);
  return path;
}

/**
 * The first string (value or object key), in document order, that PostgreSQL cannot store. Iterative,
 * so a deeply nested body cannot overflow the stack; one small record per value, and the path text is
 * built only for the value found.
 */
export function findUnstorableText(value: unknown, root = ''): UnstorableText | undefined {
  const stack: Visit[] = [{ value, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v === 'string') {
      const reason = unstorableReason(v);
      if (reason) return { field: pathOf(visit, root), reason };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: visit, key: i });
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (const key of keys) {
        const reason = unstorableReason(key);
        if (reason) return { field: pathOf(visit, root, key), reason };
      }
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({ value: (v as Record<string, unknown>)[keys[i]!], parent: visit, key: keys[i]! });
    }
  }
  return undefined;
}

const DESCRIBE: Record<UnstorableReason, string> = {
  nul_character: 'a NUL control character (\\u0000)',
  lone_surrogate: 'an unpaired UTF-16 surrogate',
  invalid_utf8: 'bytes that are not UTF-8',
};

const WHERE: Record<TextLocation, string> = {
  body: '',
  query: 'query parameter ',
  path: 'path parameter ',
  header: 'header ',
  form: 'form part ',
};

/** The 400 for one unstorable field: `details` = `{ field, location, reason }`. */
export function unstorableTextError(field: string, location: TextLocation, reason: UnstorableReason) {
  const name = field === '' ? 'the request body' : `${WHERE[location]}${field}`;
  return invalidRequest(`${name} contains ${DESCRIBE[reason]}, which cannot be stored`, {
    field,
    location,
    reason,
  });
}

/** Throws the 400 when `value` (e.g. a multipart field or filename) holds text PostgreSQL cannot store. */
export function assertStorableText(value: unknown, field: string, location: TextLocation = 'form'): void {
  const found = findUnstorableText(value, field);
  if (found) throw unstorableTextError(found.field, location, found.reason);
}

interface RouteLayer {
  route?: { path: unknown };
}

interface PathTemplate {
  /** Literal segments as they are; parameters as `{ param: snake_name }`. */
  segments: Array<string | { param: string }>;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function templatesOf(req: Request): PathTemplate[] {
  const router = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router;
  const paths = (router?.stack ?? [])
    .map((l) => l.route?.path)
    .filter((p): p is string => typeof p === 'string' && p.includes(':'));
  return [...new Set(paths)].map((p) => ({
    segments: p
      .split('/')
      .map((s) => (s.startsWith(':') ? { param: snake(s.slice(1).replace(/[^A-Za-z0-9_]/g, '')) } : s)),
  }));
}

function decodeSegment(raw: string): { text?: string; reason?: UnstorableReason } {
  try {
    const text = decodeURIComponent(raw);
    const reason = unstorableReason(text);
    return reason ? { reason } : { text };
  } catch {
    return { reason: 'invalid_utf8' };
  }
}

/**
 * The first path parameter (named as in openapi.yaml, snake_case) of a served route that matches
 * `path` and whose value cannot be stored. Routes are read from the router, so new routes are covered.
 */
function unstorablePathParam(templates: PathTemplate[], path: string): UnstorableText | undefined {
  if (!path.includes('%')) return undefined;
  const segments = path.replace(/\/+$/, '').split('/');
  for (const t of templates) {
    if (t.segments.length !== segments.length) continue;
    let found: UnstorableText | undefined;
    let matches = true;
    for (let i = 0; i < segments.length && matches; i++) {
      const want = t.segments[i]!;
      if (typeof want === 'string') {
        matches = want === segments[i];
        continue;
      }
      const { reason } = decodeSegment(segments[i]!);
      if (reason && !found) found = { field: want.param, reason };
    }
    if (matches && found) return found;
  }
  return undefined;
}

/**
 * Express middleware, installed by `createHttpApp` right after the JSON body parser: refuses (400
 * `invalid_request_error`, before any handler runs, so nothing is stored) a request whose path
 * parameters, query string or JSON body hold text PostgreSQL cannot store. Multipart forms, which are
 * streamed past the JSON parser, call `assertStorableText` on their fields and filenames.
 */
export function rejectUnstorableText(
  /** Whether the parsed body must be walked (false when its raw text cannot hold such text). */
  bodyNeedsWalk: (req: Request) => boolean = () => true,
): (req: Request, res: Response, next: NextFunction) => void {
  let templates: PathTemplate[] | undefined;
  return (req, _res, next) => {
    templates ??= templatesOf(req);
    const inPath = unstorablePathParam(templates, req.path);
    if (inPath) return next(unstorableTextError(inPath.field, 'path', inPath.reason));
    const inQuery = findUnstorableText(req.query);
    if (inQuery) return next(unstorableTextError(inQuery.field, 'query', inQuery.reason));
    if (req.body !== undefined && bodyNeedsWalk(req)) {
      const inBody = findUnstorableText(req.body);
      if (inBody) return next(unstorableTextError(inBody.field, 'body', inBody.reason));
    }
    next();
  };
}

/**
 * Node's HTTP parser refuses a header holding a NUL (or another control character) before any
 * middleware runs, and by default answers a bare `400 Bad Request`. This answers the documented
 * envelope instead, naming the header when it can be read from the raw request.
 */
export function answerMalformedHeadersWithEnvelope(server: Server): void {
  server.on('clientError', (err: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    // As Node does without a listener: answer only when nothing was written yet, then close.
    if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0)
      return void socket.destroy();
    const header =
      err.code === 'HPE_INVALID_HEADER_TOKEN' ? headerWithControlCharacter(err.rawPacket) : undefined;
    if (!header) {
      socket.end(
        `HTTP/1.1 ${DEFAULT_CLIENT_ERRORS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`,
      );
      return;
    }
    const body = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `header ${header} contains a control character (such as NUL), which cannot be stored`,
        details: { field: header, location: 'header', reason: 'nul_character' },
      },
      request_id: newId('request'),
    });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** Node's own answers to parser errors (lib/_http_server.js), kept for every other error. */
const DEFAULT_CLIENT_ERRORS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

function headerWithControlCharacter(raw: Buffer | undefined): string | undefined {
  if (!raw) return undefined;
  const head = raw.toString('latin1').split('\r\n\r\n')[0]!;
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line.slice(colon + 1))) {
      const name = line.slice(0, colon).trim().toLowerCase();
      if (/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) return name;
    }
  }
  return undefined;
}
