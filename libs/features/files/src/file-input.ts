import { DomainError, ErrorCode, invalidRequest } from '@mango/domain-kernel';

export const FILENAME_MAX = 255;

// C0 controls, DEL and C1 controls: never valid in a filename we later echo in a header.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The filename of the `file` part: required, 1–255 characters, no control characters. */
export function parseFilename(raw: string | undefined): string {
  if (raw === undefined || raw.length === 0)
    throw invalidRequest('the "file" part needs a filename (Content-Disposition: form-data; filename="…")');
  if (raw.length > FILENAME_MAX)
    throw invalidRequest(`the filename must have at most ${FILENAME_MAX} characters`);
  if (CONTROL.test(raw)) throw invalidRequest('the filename must not contain control characters');
  return raw;
}

const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MIME = new RegExp(`^${TOKEN}/${TOKEN}$`);

/** The part's media type (`type/subtype`, parameters dropped), lower-cased. */
export function parseMimeType(raw: string): string {
  if (raw.length > 255 || !MIME.test(raw))
    throw invalidRequest('the "file" part has an invalid Content-Type');
  return raw.toLowerCase();
}

/**
 * `Content-Disposition: attachment` naming the File: an ASCII fallback in `filename` (quotes,
 * backslashes and non-ASCII replaced by `_`) and the exact name in RFC 8187 `filename*`.
 */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/** Where a File's bytes live: under its Workspace's prefix, named by the File id. */
export const fileObjectKey = (workspaceId: string, fileId: string): string =>
  `workspaces/${workspaceId}/files/${fileId}`;

/** 413 `request_too_large` for a File over the configured limit. */
export const fileTooLarge = (maxBytes: number) =>
  new DomainError(ErrorCode.TooLarge, `a File may have at most ${maxBytes} bytes`);
