import { createHash } from 'node:crypto';
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

export function digestCredential(credential: string): Buffer {
  return createHash('sha256').update(credential, 'utf8').digest();
}

export function credentialKindOf(credential: string): CredentialKind | undefined {
  for (const [kind, prefix] of Object.entries(CREDENTIAL_PREFIXES) as Array<[CredentialKind, string]>) {
    if (credential.startsWith(prefix) && credential.length === prefix.length + 43) return kind;
  }
  return undefined;
}

/** A short, non-secret hint for listings: the prefix and the first four characters. */
export const credentialHint = (credential: string): string =>
  `${credential.slice(0, credential.indexOf('_', 6) + 5)}…`;
