const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C `traceparent` a polled Work secret carries (a Mango addition, present only while the API exports
 * traces): the trace of the request whose input the item serves. Undefined when absent or malformed; the
 * secret's token is never read here.
 */
export function workTraceparent(secret: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(secret, 'base64url').toString('utf8')) as { traceparent?: unknown };
    const tp = parsed?.traceparent;
    return typeof tp === 'string' && TRACEPARENT.test(tp) ? tp : undefined;
  } catch {
    return undefined;
  }
}
