import { invalidRequest } from '@mango/domain-kernel';

/** Path rules of a Memory (docs/api-guide.md, Memory Stores): what the API stores and what the worker maps to files. */
export const MEMORY_PATH_MAX_BYTES = 1024;
export const MEMORY_PATH_MAX_SEGMENTS = 20;

// Control characters (C0, DEL, C1), format characters (Cf, which includes bidi overrides and zero-width
// joiners) and the Unicode line/paragraph separators are never part of a path.
const FORBIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/**
 * Validates and normalizes a Memory path: NFC, starts with `/`, 1–20 segments, no empty, `.` or `..`
 * segment (so no traversal and no trailing slash), no control or format characters, at most 1024 UTF-8
 * bytes. Case is kept (paths are case-sensitive). Returns the normalized path or throws 400.
 */
export function normalizeMemoryPath(raw: unknown, field = 'path'): string {
  if (typeof raw !== 'string') throw invalidRequest(`${field} must be a string`);
  const path = raw.normalize('NFC');
  if (!path.startsWith('/')) throw invalidRequest(`${field} must start with "/"`);
  if (FORBIDDEN.test(path)) throw invalidRequest(`${field} must not contain control or format characters`);
  if (utf8Length(path) > MEMORY_PATH_MAX_BYTES)
    throw invalidRequest(`${field} must be at most ${MEMORY_PATH_MAX_BYTES} bytes of UTF-8`);
  const segments = path.slice(1).split('/');
  if (segments.length > MEMORY_PATH_MAX_SEGMENTS)
    throw invalidRequest(`${field} must have at most ${MEMORY_PATH_MAX_SEGMENTS} segments`);
  for (const s of segments) {
    if (s === '') throw invalidRequest(`${field} must not contain empty segments (or end with "/")`);
    if (s === '.' || s === '..') throw invalidRequest(`${field} must not contain "." or ".." segments`);
  }
  return path;
}

/** A list prefix: `/`, or a valid path followed by `/` (whole-segment match). */
export function normalizePathPrefix(raw: unknown, field = 'path_prefix'): string {
  if (raw === undefined || raw === '') return '/';
  if (typeof raw !== 'string') throw invalidRequest(`${field} must be a string`);
  if (raw === '/') return '/';
  if (!raw.endsWith('/')) throw invalidRequest(`${field} must end with "/"`);
  return `${normalizeMemoryPath(raw.slice(0, -1), field)}/`;
}

/** The proper ancestors of a path: `/a/b/c` → [`/a`, `/a/b`]. */
export function ancestorPaths(path: string): string[] {
  const segments = path.slice(1).split('/');
  return segments.slice(0, -1).map((_, i) => `/${segments.slice(0, i + 1).join('/')}`);
}

/** Lower-case hex SHA-256, as `content_sha256` and preconditions spell it. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export function readSha256(raw: unknown, field: string): string {
  if (typeof raw !== 'string' || !SHA256_HEX.test(raw))
    throw invalidRequest(`${field} must be 64 lower-case hex characters`);
  return raw;
}

const encoder = new TextEncoder();
export const utf8Length = (s: string): number => encoder.encode(s).length;
