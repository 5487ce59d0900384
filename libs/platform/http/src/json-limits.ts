import { DomainError, ErrorCode, invalidRequest } from '@mango/domain-kernel';

/**
 * Bounds on the shape of a JSON request body, checked on the raw bytes before `JSON.parse` builds
 * anything (docs/operator-guide.md "Limits"). The byte size is bounded separately (MANGO_MAX_REQUEST_BYTES).
 */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects (MANGO_MAX_JSON_DEPTH). */
  maxDepth: number;
  /** Most JSON values — array elements and object members, counted as containers plus separators (MANGO_MAX_JSON_VALUES). */
  maxValues: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 128, maxValues: 1_000_000 };

export type JsonScan =
  | {
      ok: true;
      /**
       * The text holds a `\u0000` or `\uD800`–`\uDFFF` escape: the only ways a JSON text (valid UTF-8,
       * no raw control characters in strings) can carry text PostgreSQL cannot store. When false, the
       * parsed value needs no walk for such text.
       */
      escapesToCheck: boolean;
    }
  | { ok: false; exceeded: 'depth' | 'values' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** `\u0000` or a surrogate escape `\uD8..`–`\uDF..` starts at `i` (the backslash). */
function isSuspectEscape(buf: Uint8Array, i: number): boolean {
  if (buf[i + 1] !== 0x75 /* u */) return false;
  const a = buf[i + 2];
  const b = buf[i + 3];
  if (a === 0x30 && b === 0x30 && buf[i + 4] === 0x30 && buf[i + 5] === 0x30) return true;
  if (a !== 0x64 && a !== 0x44) return false; // d / D
  // 8, 9, a–f, A–F
  return (b! >= 0x38 && b! <= 0x39) || (b! >= 0x61 && b! <= 0x66) || (b! >= 0x41 && b! <= 0x46);
}

/**
 * One linear pass over a JSON text's bytes: the nesting depth and the number of values, stopping at
 * the first limit exceeded, and whether any escape may encode unstorable text. Strings are skipped
 * with `indexOf` (native), so a body of long strings costs little more than a memchr. Malformed JSON is
 * not this function's concern (JSON.parse refuses it afterwards); it never throws and never recurses.
 */
export function scanJson(buf: Buffer, limits: JsonLimits): JsonScan {
  const end = buf.length;
  let depth = 0;
  let values = 1;
  let escapesToCheck = false;
  let nextQuote = -1;
  let nextBackslash = -1;
  const find = (byte: number, from: number) => {
    const at = buf.indexOf(byte, from);
    return at < 0 ? end : at;
  };
  for (let i = 0; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      // Skip to the closing quote; escapes are a backslash and the byte after it.
      let j = i + 1;
      for (;;) {
        if (nextQuote < j) nextQuote = find(QUOTE, j);
        if (nextBackslash < j) nextBackslash = find(BACKSLASH, j);
        if (nextBackslash < nextQuote) {
          if (!escapesToCheck && isSuspectEscape(buf, nextBackslash)) escapesToCheck = true;
          j = nextBackslash + 2;
          continue;
        }
        break;
      }
      i = nextQuote;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limits.maxDepth) return { ok: false, exceeded: 'depth' };
      if (++values > limits.maxValues) return { ok: false, exceeded: 'values' };
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2c) {
      if (++values > limits.maxValues) return { ok: false, exceeded: 'values' };
    }
  }
  return { ok: true, escapesToCheck };
}

/** The error for a body beyond a limit: too deep is 400, too many values is 413; both in the envelope. */
export function jsonLimitError(exceeded: 'depth' | 'values', limits: JsonLimits) {
  return exceeded === 'depth'
    ? invalidRequest(`request body is nested deeper than ${limits.maxDepth} levels of arrays and objects`, {
        reason: 'json_too_deep',
        limit: limits.maxDepth,
      })
    : new DomainError(
        ErrorCode.TooLarge,
        `request body has more than ${limits.maxValues} JSON values (array elements and object members)`,
        { reason: 'json_too_many_values', limit: limits.maxValues },
      );
}
