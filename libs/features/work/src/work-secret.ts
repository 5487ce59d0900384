/** The Work secret Poll returns: URL-safe base64 of `{"sessions_token": …, "api_base_url": …}`. */
export interface WorkSecret {
  sessions_token: string;
  api_base_url: string;
  /**
   * Mango addition, only while tracing is configured: the W3C trace context of the request whose input
   * the item serves, for the worker's `mango.environment.work` span (decoders ignore unknown fields).
   */
  traceparent?: string;
}

export const encodeWorkSecret = (secret: WorkSecret): string =>
  Buffer.from(JSON.stringify(secret), 'utf8').toString('base64url');

/**
 * Decoding has one home, the standalone TypeScript SDK (`libs/sdk/typescript/src/work-secret.ts`, the
 * one workers use): re-exported here for the suites that read a polled secret.
 */
export { decodeWorkSecret } from '@mango/sdk';
