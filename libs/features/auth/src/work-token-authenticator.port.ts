import type { Principal } from './principal';

/** Resolves a per-Work token digest to its principal. Provided by the Work feature. */
export interface WorkTokenAuthenticator {
  authenticate(digest: Buffer): Promise<Extract<Principal, { kind: 'work' }> | null>;
}

export const WORK_TOKEN_AUTHENTICATOR = Symbol('WORK_TOKEN_AUTHENTICATOR');
