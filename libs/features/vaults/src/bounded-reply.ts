/**
 * One bounded HTTP exchange with a token endpoint or an MCP server on behalf of a Vault credential
 * (docs/api-guide.md, Vaults: OAuth refresh and `mcp_oauth_validate`). The exchange has one deadline that
 * covers the headers and the whole body, a size cap counted while the body streams in (the rest is never
 * read: the connection is dropped), and it ends when the caller's signal aborts (a cancelled Temporal
 * activity, a closed request).
 */

/** Why a bounded exchange ended without a whole reply. */
export type BoundedReplyFailure = 'deadline' | 'too_large' | 'aborted' | 'unreachable';

export class BoundedReplyError extends Error {
  constructor(
    readonly kind: BoundedReplyFailure,
    message: string,
    /** Body bytes accepted before the exchange ended (never more than the cap). */
    readonly bytesRead: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BoundedReplyError';
  }
}

export interface BoundedReply {
  status: number;
  contentType: string | null;
  /** The whole body, decoded as UTF-8 (at most `maxBytes` bytes). */
  text: string;
  bytesRead: number;
}

export interface ReplyBounds {
  /** One deadline for the request, the headers and the whole body. */
  deadlineMs: number;
  /** The largest body accepted, in bytes, counted while reading. */
  maxBytes: number;
  /** The caller's cancellation (e.g. a Temporal activity's `cancellationSignal`). */
  signal?: AbortSignal;
}

type Fetch = (url: URL, init: RequestInit) => Promise<Response>;

/**
 * `fetchFn(url, init)` under `bounds`. Resolves with the whole reply, or rejects with a
 * `BoundedReplyError` whose `kind` says which bound ended it (`unreachable`: the request failed before or
 * while connecting; its `cause` is the underlying error).
 */
export async function fetchBounded(
  fetchFn: Fetch,
  url: URL,
  init: RequestInit,
  bounds: ReplyBounds,
): Promise<BoundedReply> {
  const deadline = AbortSignal.timeout(bounds.deadlineMs);
  const local = new AbortController();
  const signals = [deadline, local.signal, ...(bounds.signal ? [bounds.signal] : [])];
  const signal = AbortSignal.any(signals);
  let bytesRead = 0;
  const ended = (err: unknown): BoundedReplyError => {
    if (err instanceof BoundedReplyError) return err;
    if (bounds.signal?.aborted)
      return new BoundedReplyError('aborted', 'the request was cancelled', bytesRead, { cause: err });
    if (deadline.aborted)
      return new BoundedReplyError(
        'deadline',
        `no complete answer within ${bounds.deadlineMs} ms`,
        bytesRead,
        { cause: err },
      );
    return new BoundedReplyError('unreachable', (err as Error)?.message ?? String(err), bytesRead, {
      cause: err,
    });
  };
  if (bounds.signal?.aborted) throw ended(bounds.signal.reason);
  let res: Response;
  try {
    res = await fetchFn(url, { ...init, signal });
  } catch (err) {
    throw ended(err);
  }
  const chunks: Uint8Array[] = [];
  const reader = res.body?.getReader();
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      if (bytesRead + value.byteLength > bounds.maxBytes)
        throw new BoundedReplyError(
          'too_large',
          `the answer is larger than ${bounds.maxBytes} bytes`,
          bytesRead,
        );
      bytesRead += value.byteLength;
      chunks.push(value);
    }
  } catch (err) {
    // Stop the transfer: nothing more of this body is read.
    local.abort();
    await reader?.cancel().catch(() => undefined);
    throw ended(err);
  }
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text: Buffer.concat(chunks).toString('utf8'),
    bytesRead,
  };
}

/** The longest reply text an API response shows (`http_response.body`). */
export const SHOWN_BODY_MAX = 4096;

const TOKEN_FIELDS = '(?:access_token|refresh_token|id_token|client_secret)';
/** A JSON token field, its string closed or cut off by the end of the text. */
const JSON_TOKEN = new RegExp(`("${TOKEN_FIELDS}"\\s*:\\s*")(?:[^"\\\\]|\\\\.)*(?:"|\\\\?$)`, 'g');
/** A form-encoded token field (`access_token=…&…`). */
const FORM_TOKEN = new RegExp(`(${TOKEN_FIELDS}=)[^&\\s"]*`, 'g');
export const REDACTED = '[redacted]';

/**
 * Removes secrets from a reply text: the values of token fields (JSON or form-encoded, also when cut off
 * by the end of the text) and every occurrence of a known secret — as written, JSON-escaped and
 * URL-encoded. Run it on the whole text, before any cut, so a secret that straddles the cut cannot leave
 * a fragment behind.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined | null>): string {
  let out = text.replace(JSON_TOKEN, `$1${REDACTED}"`).replace(FORM_TOKEN, `$1${REDACTED}`);
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
    forms.add(encodeURIComponent(s));
  }
  for (const f of [...forms].sort((a, b) => b.length - a.length)) out = out.split(f).join(REDACTED);
  return out;
}

/** Redacts `secrets`, then cuts to `SHOWN_BODY_MAX` characters (never inside a surrogate pair). */
export function shownBody(
  text: string,
  secrets: ReadonlyArray<string | undefined | null>,
): { body: string; body_truncated: boolean } {
  const redacted = redactSecrets(text, secrets);
  if (redacted.length <= SHOWN_BODY_MAX) return { body: redacted, body_truncated: false };
  let end = SHOWN_BODY_MAX;
  const last = redacted.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { body: redacted.slice(0, end), body_truncated: true };
}
