/**
 * The framing rules of the Work API socket (docs/operator-guide.md "Sandbox network"): which requests
 * from a sandbox may be forwarded at all, judged on what Node's strict parser (llhttp) kept of the
 * request head. The parser already refuses most desynchronisation tricks (CL+TE together, a duplicate
 * Content-Length, obs-fold, bare LF); these rules hold even where it is lenient — a `Transfer-Encoding:`
 * followed by a tab is accepted by the parser and framed as chunked — and add what a proxy needs on top:
 * one explicit length under a cap, no body where the method has none, no protocol switch.
 */

/**
 * The largest body the socket forwards. The largest legitimate Work token request is a tool result or a
 * memory write: a `read` result is at most 110,000 bytes (`READ_VIEW_RANGE_ABOVE_BYTES`), bash output is
 * cut at 30,000 characters (`BASH_OUTPUT_LIMIT_CHARS`), custom tool output is capped at 100 KiB of text
 * (`CUSTOM_TOOLS_LIMITS.maxOutputBytes`) and memory content at 100 KiB of UTF-8
 * (`MANGO_MEMORY_MAX_CONTENT_BYTES`), which JSON may grow up to six times (`\u0001` for one control
 * byte): about 660 KB. 2 MiB leaves three times that.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** More header lines than any client of the socket sends (the runner sends fewer than 10). */
export const MAX_HEADER_LINES = 64;

/** Methods that never carry a body on a Work token route: a body there is only a smuggling vehicle. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE']);

export type Framing =
  | { ok: true; length: number }
  | { ok: false; status: 400 | 413; type: 'invalid_request_error' | 'request_too_large'; message: string };

const refuse = (message: string): Framing => ({
  ok: false,
  status: 400,
  type: 'invalid_request_error',
  message,
});

/**
 * Whether a request head may be forwarded, and the exact number of body bytes that follow it.
 * `rawHeaders` is Node's `req.rawHeaders` (name, value, name, value…: every line as sent, duplicates kept).
 */
export function requestFraming(
  method: string,
  httpVersion: string,
  rawHeaders: readonly string[],
  maxBodyBytes = MAX_BODY_BYTES,
): Framing {
  if (httpVersion !== '1.1') return refuse(`HTTP/${httpVersion} is not served here; send HTTP/1.1`);
  if (rawHeaders.length / 2 > MAX_HEADER_LINES)
    return refuse(`a request may have at most ${MAX_HEADER_LINES} header lines`);
  const lengths: string[] = [];
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (/[\r\n]/.test(value)) return refuse('a header value may not span lines (obsolete line folding)');
    if (name === 'transfer-encoding')
      return refuse('Transfer-Encoding is refused here: send the body with one Content-Length');
    if (name === 'upgrade' || (name === 'connection' && /(^|,)\s*upgrade\s*(,|$)/i.test(value)))
      return refuse('protocol upgrades are refused here');
    if (name === 'content-length') lengths.push(value);
    if (name === 'host') hosts++;
  }
  if (hosts !== 1) return refuse('a request must have exactly one Host header');
  if (lengths.length > 1) return refuse('a request may have only one Content-Length');
  if (lengths.length === 0) return { ok: true, length: 0 };
  const declared = lengths[0]!.trim();
  if (!/^\d{1,16}$/.test(declared)) return refuse('Content-Length must be a decimal number of bytes');
  const length = Number(declared);
  if (length > 0 && BODILESS.has(method.toUpperCase()))
    return refuse(`a ${method.toUpperCase()} request has no body`);
  if (length > maxBodyBytes)
    return {
      ok: false,
      status: 413,
      type: 'request_too_large',
      message: `request body is too large: the Work API socket forwards at most ${maxBodyBytes} bytes`,
    };
  return { ok: true, length };
}
