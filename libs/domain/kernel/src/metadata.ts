import { invalidRequest } from './domain-error';

/** Metadata rules shared by every resource: ≤16 keys, key 1–64 chars, value ≤512 chars, strings only. */
export const METADATA_MAX_KEYS = 16;
export const METADATA_MAX_KEY_LENGTH = 64;
export const METADATA_MAX_VALUE_LENGTH = 512;

export type Metadata = Record<string, string>;
/** An update: a string upserts a key, `null` deletes it. */
export type MetadataPatch = Record<string, string | null>;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function checkKey(key: string): void {
  if (key.length < 1 || key.length > METADATA_MAX_KEY_LENGTH) {
    throw invalidRequest(`metadata keys must be 1–${METADATA_MAX_KEY_LENGTH} characters`, {
      key: key.slice(0, 80),
    });
  }
}

function checkValue(key: string, value: string): void {
  if (value.length > METADATA_MAX_VALUE_LENGTH) {
    throw invalidRequest(`metadata value for "${key}" exceeds ${METADATA_MAX_VALUE_LENGTH} characters`);
  }
}

function checkCount(result: Metadata): Metadata {
  if (Object.keys(result).length > METADATA_MAX_KEYS) {
    throw invalidRequest(`metadata may hold at most ${METADATA_MAX_KEYS} keys`);
  }
  return result;
}

/** Validates metadata given on create. `undefined` means none. */
export function parseMetadata(input: unknown, field = 'metadata'): Metadata {
  if (input === undefined || input === null) return {};
  if (!isPlainObject(input)) throw invalidRequest(`${field} must be an object of string values`);
  const out: Metadata = {};
  for (const [key, value] of Object.entries(input)) {
    checkKey(key);
    if (typeof value !== 'string') throw invalidRequest(`${field}.${key} must be a string`);
    checkValue(key, value);
    out[key] = value;
  }
  return checkCount(out);
}

/**
 * Applies a metadata patch: string upserts, null deletes; `deleteOnEmpty` also treats "" as delete
 * (Environments). The result must still satisfy the limits.
 */
export function applyMetadataPatch(
  current: Metadata,
  patch: unknown,
  options: { deleteOnEmpty?: boolean; field?: string } = {},
): Metadata {
  const field = options.field ?? 'metadata';
  if (patch === undefined) return current;
  if (patch === null) return current;
  if (!isPlainObject(patch)) throw invalidRequest(`${field} must be an object of string or null values`);
  const out: Metadata = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    checkKey(key);
    if (value === null || (options.deleteOnEmpty && value === '')) {
      delete out[key];
      continue;
    }
    if (typeof value !== 'string') throw invalidRequest(`${field}.${key} must be a string or null`);
    checkValue(key, value);
    out[key] = value;
  }
  return checkCount(out);
}
