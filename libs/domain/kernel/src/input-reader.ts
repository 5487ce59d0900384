import { invalidRequest } from './domain-error';

/**
 * Small, strict readers for untrusted JSON, used where a request shape is a discriminated union that
 * decorators describe poorly (Agent tools, rosters). Every error names the JSON path it found.
 */
export type Json = unknown;
export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function readObject(v: unknown, path: string, allowed?: readonly string[]): JsonObject {
  if (!isObject(v)) throw invalidRequest(`${path} must be an object`);
  if (allowed) {
    for (const key of Object.keys(v)) {
      if (!allowed.includes(key)) throw invalidRequest(`${path}.${key}: unknown field`);
    }
  }
  return v;
}

export function readString(
  v: unknown,
  path: string,
  opts: { min?: number; max?: number; pattern?: RegExp } = {},
): string {
  if (typeof v !== 'string') throw invalidRequest(`${path} must be a string`);
  const min = opts.min ?? 0;
  if (v.length < min)
    throw invalidRequest(
      min === 1 ? `${path} must not be empty` : `${path} must have at least ${min} characters`,
    );
  if (opts.max !== undefined && v.length > opts.max)
    throw invalidRequest(`${path} must have at most ${opts.max} characters`);
  if (opts.pattern && !opts.pattern.test(v)) throw invalidRequest(`${path} has an invalid format`);
  return v;
}

export function readOptionalString(
  v: unknown,
  path: string,
  opts: { min?: number; max?: number; pattern?: RegExp } = {},
): string | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  return readString(v, path, opts);
}

export function readBoolean(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') throw invalidRequest(`${path} must be a boolean`);
  return v;
}

/** Versions and counters are PostgreSQL `integer`s: a larger value would fail in the database, not as input. */
export const PG_INTEGER_MAX = 2_147_483_647;

export function readInteger(v: unknown, path: string, opts: { min?: number; max?: number } = {}): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidRequest(`${path} must be an integer`);
  if (opts.min !== undefined && v < opts.min) throw invalidRequest(`${path} must be at least ${opts.min}`);
  if (opts.max !== undefined && v > opts.max) throw invalidRequest(`${path} must be at most ${opts.max}`);
  return v;
}

export function readArray(v: unknown, path: string, opts: { max?: number; min?: number } = {}): unknown[] {
  if (!Array.isArray(v)) throw invalidRequest(`${path} must be an array`);
  if (opts.min !== undefined && v.length < opts.min)
    throw invalidRequest(`${path} must have at least ${opts.min} entries`);
  if (opts.max !== undefined && v.length > opts.max)
    throw invalidRequest(`${path} must have at most ${opts.max} entries`);
  return v;
}

export function readEnum<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw invalidRequest(`${path} must be one of: ${values.join(', ')}`);
  }
  return v as T;
}

/** Deterministic JSON (sorted keys) for equality checks of stored definitions. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
