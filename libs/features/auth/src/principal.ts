import { unauthenticated } from '@mango/domain-kernel';
import { STALE_WORK_TOKEN } from '@mango/persistence';

/** Who is calling, as established by the auth guard from the presented credential. */
export type Principal =
  | { kind: 'workspace'; workspaceId: string; keyId: string }
  | { kind: 'environment'; workspaceId: string; environmentId: string; keyId: string }
  | {
      kind: 'work';
      workspaceId: string;
      environmentId: string;
      workId: string;
      sessionId: string | null;
      tokenDigest: Buffer;
      /** Whether the token may still read its Session now; a dead token is 401 on every other route. */
      live: boolean;
    };

/**
 * The auth guard's verdict on a Work token, re-stated by routes that accept one: a dead token (its Work
 * stopped, reclaimed or its lease expired, by the lease state machine's `tokenAccess`) is 401. Writes
 * check again in their own transaction with `requireLiveLease` (libs/persistence).
 */
export function requireLiveToken(p: Principal): void {
  if (p.kind === 'work' && !p.live) throw unauthenticated(STALE_WORK_TOKEN);
}

export type PrincipalKind = Principal['kind'];

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}
