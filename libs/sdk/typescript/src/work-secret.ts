import type { WorkSecret } from './types';

/** Thrown by {@link decodeWorkSecret} when a secret is not URL-safe base64 of a `WorkSecret` JSON object. */
export class InvalidWorkSecretError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Invalid Work secret: ${message}`, options);
    this.name = 'InvalidWorkSecretError';
  }
}

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Decodes the `secret` of a polled Work item: URL-safe base64 (padding optional) of the JSON
 * `{"sessions_token": "...", "api_base_url": "..."}`. Throws {@link InvalidWorkSecretError} when the
 * input is not valid base64url, not UTF-8 JSON, not an object, or lacks a non-empty `sessions_token`
 * or an http(s) `api_base_url`. Unknown extra fields are ignored.
 */
export function decodeWorkSecret(secret: string): WorkSecret {
  if (typeof secret !== 'string' || secret === '')
    throw new InvalidWorkSecretError('expected a non-empty string');
  if (!BASE64URL.test(secret)) {
    throw new InvalidWorkSecretError('not URL-safe base64 (allowed: A-Z a-z 0-9 - _ and trailing =)');
  }
  const unpadded = secret.replace(/=+$/, '');
  if (unpadded.length % 4 === 1 || (secret.length !== unpadded.length && secret.length % 4 !== 0)) {
    throw new InvalidWorkSecretError('base64 length or padding is invalid');
  }

  let bytes: Uint8Array;
  try {
    const standard = unpadded.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
    bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch (cause) {
    throw new InvalidWorkSecretError('not decodable as base64', { cause });
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (cause) {
    throw new InvalidWorkSecretError('payload is not UTF-8 JSON', { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidWorkSecretError('payload is not a JSON object');
  }
  const { sessions_token, api_base_url } = parsed as Record<string, unknown>;
  if (typeof sessions_token !== 'string' || sessions_token === '') {
    throw new InvalidWorkSecretError('sessions_token is missing or not a non-empty string');
  }
  if (typeof api_base_url !== 'string' || !isHttpUrl(api_base_url)) {
    throw new InvalidWorkSecretError('api_base_url is missing or not an http(s) URL');
  }
  return { sessions_token, api_base_url };
}

/** Encodes a `WorkSecret` the way the server does (URL-safe base64 without padding). Useful for test fakes. */
export function encodeWorkSecret(secret: WorkSecret): string {
  const bytes = new TextEncoder().encode(JSON.stringify(secret));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
