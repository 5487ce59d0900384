import { DomainError, ErrorCode, invalidRequest } from '@mango/domain-kernel';

/** 409 `memory_path_conflict_error`: the path, or an ancestor or descendant of it, is taken. */
export const pathConflict = (path: string, conflicting: { id: string; path: string }) =>
  new DomainError(
    ErrorCode.Conflict,
    conflicting.path === path
      ? `a memory already exists at ${path}`
      : `${path} overlaps the memory at ${conflicting.path}`,
    { conflicting_memory_id: conflicting.id, conflicting_path: conflicting.path },
    'memory_path_conflict_error',
  );

/** 409 `memory_precondition_failed_error`: the Memory's content is not the one the caller expected. */
export const preconditionFailed = (memoryId: string, actual: string) =>
  new DomainError(
    ErrorCode.Conflict,
    `memory ${memoryId} does not have the expected content_sha256`,
    { content_sha256: actual },
    'memory_precondition_failed_error',
  );

export const contentTooLarge = (maxBytes: number) =>
  new DomainError(ErrorCode.TooLarge, `memory content may have at most ${maxBytes} bytes of UTF-8`);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `content`: a string (possibly empty) of well-formed UTF-16, at most `maxBytes` once UTF-8 encoded. */
export function readContent(v: unknown, maxBytes: number): Buffer {
  if (typeof v !== 'string') throw invalidRequest('content must be a string');
  if (LONE_SURROGATE.test(v)) throw invalidRequest('content must be valid Unicode (no lone surrogates)');
  const bytes = Buffer.from(v, 'utf8');
  if (bytes.length > maxBytes) throw contentTooLarge(maxBytes);
  return bytes;
}

export type MemoryViewKind = 'basic' | 'full';

export function readView(raw: unknown, fallback: MemoryViewKind): MemoryViewKind {
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'basic' || raw === 'full') return raw;
  throw invalidRequest('view must be basic or full');
}
