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

export type PrincipalKind = Principal['kind'];

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}
