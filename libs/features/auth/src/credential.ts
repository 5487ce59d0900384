import { hash } from 'node:crypto';
import { pooledRandomBytes } from '@mango/platform-ids';

/**
 * Credential formats. The prefix tells the guard which table holds the digest; the rest is 32 random
 * bytes from the OS CSPRNG (pooled, `pooledRandomBytes`). Only SHA-256 digests are ever stored.
 */
export const CREDENTIAL_PREFIXES = {
  workspaceKey: 'mango_ak_',
  environmentKey: 'mango_ek_',
  workToken: 'mango_wt_',
} as const;

export type CredentialKind = keyof typeof CREDENTIAL_PREFIXES;

export function generateCredential(kind: CredentialKind): string {
  return CREDENTIAL_PREFIXES[kind] + pooledRandomBytes(32).toString('base64url');
}

/** The SHA-256 digest stored for a credential (one-shot `crypto.hash`: no Hash object per request). */
export function digestCredential(credential: string): Buffer {
  return hash('sha256', credential, 'buffer');
}

/** The same digest as base64 text: the auth guard's cache key, without a Buffer and a hex copy per request. */
export function credentialDigestKey(credential: string): string {
  return hash('sha256', credential, 'base64');
}

/** The prefixes as pairs, built once (every authenticated request asks for its credential's kind). */
const KINDS = Object.entries(CREDENTIAL_PREFIXES) as ReadonlyArray<[CredentialKind, string]>;

export function credentialKindOf(credential: string): CredentialKind | undefined {
  for (const [kind, prefix] of KINDS) {
    if (credential.length === prefix.length + 43 && credential.startsWith(prefix)) return kind;
  }
  return undefined;
}

/** A short, non-secret hint for listings: the prefix and the first four characters. */
export const credentialHint = (credential: string): string =>
  `${credential.slice(0, credential.indexOf('_', 6) + 5)}…`;
