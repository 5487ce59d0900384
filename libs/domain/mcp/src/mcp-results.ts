/** One content item of an MCP `tools/call` result (the parts Mango reads). */
export interface McpContentItem {
  type: string;
  text?: string;
  [k: string]: unknown;
}

/** Text inline to the model up to this many UTF-8 bytes (documented on the MCP page). */
export const MCP_INLINE_RESULT_BYTES = 100_000;
/** The largest textual result kept as a File (see docs/capabilities.md). */
export const MCP_FILE_RESULT_BYTES = 32 * 1024 * 1024;

export const MCP_UNSUPPORTED_CONTENT_MESSAGE = (types: string[]) =>
  `The MCP tool returned content Mango does not support (${types.join(', ')}): binary content (images, ` +
  'audio), embedded resources, resource links and prompts are not passed to the model.';

export type BoundedMcpResult =
  /** Everything fits inline. */
  | { kind: 'inline'; text: string; isError: boolean }
  /** Larger text: the model gets `preview`, the whole `text` goes to a File (when Files storage exists). */
  | { kind: 'large'; text: string; preview: string; bytes: number; isError: boolean }
  /** Unsupported content or a result over the File bound: an error text for the model. */
  | { kind: 'refused'; text: string };

/** Cuts a string to at most `max` UTF-8 bytes on a code point boundary. */
export function utf8Prefix(s: string, max: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/**
 * Bounds an MCP result for the model (see docs/capabilities.md): text items are joined with newlines; up to
 * `MCP_INLINE_RESULT_BYTES` goes inline; more (up to 32 MiB) is "large" (the caller stores a File, or
 * without Files storage passes the preview with a note); any non-text item refuses the whole result.
 */
export function boundMcpResult(
  content: McpContentItem[],
  isError: boolean,
  opts: { inlineBytes?: number; fileBytes?: number } = {},
): BoundedMcpResult {
  const inline = opts.inlineBytes ?? MCP_INLINE_RESULT_BYTES;
  const fileMax = opts.fileBytes ?? MCP_FILE_RESULT_BYTES;
  const unsupported = [...new Set(content.filter((c) => c.type !== 'text').map((c) => c.type))];
  if (unsupported.length) return { kind: 'refused', text: MCP_UNSUPPORTED_CONTENT_MESSAGE(unsupported) };
  const text = content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= inline) return { kind: 'inline', text, isError };
  if (bytes > fileMax)
    return {
      kind: 'refused',
      text: `The MCP tool returned ${bytes} bytes of text, more than the ${fileMax}-byte limit Mango keeps; the result was discarded.`,
    };
  return { kind: 'large', text, preview: utf8Prefix(text, inline), bytes, isError };
}

/** The model's text for a large result: the preview plus where the rest is (or that it was cut). */
export function largeResultText(r: { preview: string; bytes: number }, fileId: string | null): string {
  const note = fileId
    ? `[Result truncated: ${Buffer.byteLength(r.preview, 'utf8')} of ${r.bytes} bytes shown. The complete result is File ${fileId}.]`
    : `[Result truncated: ${Buffer.byteLength(r.preview, 'utf8')} of ${r.bytes} bytes shown. Files storage is not configured, so the rest was not kept.]`;
  return `${r.preview}\n${note}`;
}
