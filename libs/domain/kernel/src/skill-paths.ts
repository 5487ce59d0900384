/**
 * Skill bundle rules shared by the upload side (apps/files) and the staging side (the worker): the
 * safe-path check and the limits of docs/api-guide.md, Skills. Pure: no I/O.
 */

const MIB = 1024 * 1024;

export const SKILL_LIMITS = {
  /** Unique Skill pins one Session may stage. */
  sessionPins: 500,
  /** Compressed, and separately expanded, bytes one Session may stage. */
  sessionBytes: 500 * MIB,
  /** Files one Session may stage. */
  sessionFiles: 10_000,
  /** Default bound of one bundle's expanded (and compressed) bytes; configurable on apps/files. */
  bundleBytes: 500 * MIB,
  /** Default bound of one bundle's files; configurable on apps/files. */
  bundleFiles: 10_000,
  /** Longest member path in UTF-8 bytes. */
  pathBytes: 1024,
  /** Longest path segment in UTF-8 bytes (common filesystem limit). */
  segmentBytes: 255,
} as const;

const encoder = new TextEncoder();
const utf8Length = (s: string): number => encoder.encode(s).length;

// C0 controls, DEL and C1 controls (NUL included).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `path` is not a safe member path of a Skill bundle, or null when it is. Safe means: relative
 * (`top/…`, at least two segments), `/`-separated, no empty, `.` or `..` segment, no backslash, no
 * control character (NUL included), at most 1024 bytes and 255 bytes per segment.
 */
export function unsafeSkillPath(path: string): string | null {
  if (path.length === 0) return 'the path is empty';
  if (CONTROL.test(path)) return 'the path contains a control character';
  if (path.includes('\\')) return 'the path contains a backslash';
  if (path.startsWith('/')) return 'the path is absolute';
  if (/^[A-Za-z]:/.test(path)) return 'the path starts with a drive letter';
  if (utf8Length(path) > SKILL_LIMITS.pathBytes)
    return `the path is longer than ${SKILL_LIMITS.pathBytes} bytes`;
  const segments = path.split('/');
  for (const s of segments) {
    if (s === '') return 'the path has an empty segment';
    if (s === '.' || s === '..') return `the path has a "${s}" segment`;
    if (utf8Length(s) > SKILL_LIMITS.segmentBytes)
      return `a path segment is longer than ${SKILL_LIMITS.segmentBytes} bytes`;
  }
  if (segments.length < 2) return "the path is not inside the bundle's top-level directory";
  return null;
}

/** Skill names (SKILL.md `name`): a lower-case kebab-case slug of 1–64 characters. */
export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
