import { invalidRequest } from '@mango/domain-kernel';

/**
 * Memory lists page by path (up to 1024 bytes, longer than the shared cursor allows), so they have their
 * own opaque cursor, bound to the Store, prefix and depth that produced it.
 */
export function encodeMemoryCursor(scope: string, after: string): string {
  return Buffer.from(JSON.stringify(['memories', scope, after]), 'utf8').toString('base64url');
}

export function decodeMemoryCursor(page: string, scope: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
  } catch {
    throw invalidRequest('page is not a valid page cursor');
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    parsed[0] !== 'memories' ||
    typeof parsed[2] !== 'string' ||
    parsed[2].length === 0
  )
    throw invalidRequest('page is not a valid page cursor');
  if (parsed[1] !== scope) throw invalidRequest('page cursor belongs to a different list');
  return parsed[2];
}
