import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { permissionDenied, unauthenticated } from '@mango/domain-kernel';
import { PUBLIC_ROUTE } from '@mango/platform-http';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { ALLOWED_CREDENTIALS, RECHECKS_WORKSPACE_KEY } from './allow-credentials.decorator';
import { credentialDigestKey, credentialKindOf, digestCredential } from './credential';
import { requireLiveToken, type Principal, type PrincipalKind } from './principal';
import { WORK_TOKEN_AUTHENTICATOR, WorkTokenAuthenticator } from './work-token-authenticator.port';

/** Reads the credential from `Authorization: Bearer …` or `x-api-key: …` (same meaning). */
export function presentedCredential(req: Request): string | undefined {
  const auth = req.headers.authorization;
  const key = req.headers['x-api-key'];
  const fromKey = typeof key === 'string' && key.length > 0 ? key.trim() : undefined;
  if (typeof auth === 'string' && auth.length > 0) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const bearer = m ? m[1] : '';
    // Two different credentials in one request are ambiguous: refuse rather than pick one.
    if (fromKey !== undefined && fromKey !== bearer) return '';
    return bearer;
  }
  return fromKey;
}

/**
 * Principals remembered briefly per process, so that the hot routes do not cost a key query each:
 * - Environment keys (a supervisor's Poll and Ack): every route an Environment key may call (Poll, Ack,
 *   stats) re-checks the key inside its own transaction, holding the key's row FOR SHARE
 *   (WorkService.holdKey);
 * - Workspace keys, only on routes marked `RechecksWorkspaceKey` (a File's upload and download, a
 *   Session's event append), whose statements re-check the key (`liveWorkspaceKey`); every other route
 *   looks the key up each time.
 * A revoked key passes this guard for at most the TTL and is refused by that check. Only successful
 * look-ups are kept.
 */
export const PRINCIPAL_CACHE_TTL_MS = 10_000;
const PRINCIPAL_CACHE_MAX = 10_000;

interface RouteAccess {
  public: boolean;
  /** Credential kinds the route accepts (Workspace API keys only, unless it says otherwise). */
  allowed: readonly PrincipalKind[];
  /** `RechecksWorkspaceKey`: the route's statements re-check a Workspace key, so a cached one may answer. */
  rechecksWorkspaceKey: boolean;
}

@Injectable()
export class AuthGuard implements CanActivate {
  private readonly principals = new Map<string, { principal: Principal; until: number }>();
  private readonly routes = new WeakMap<object, RouteAccess>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Optional() @Inject(WORK_TOKEN_AUTHENTICATOR) private readonly workTokens?: WorkTokenAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeAccess(context);
    if (route.public) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const credential = presentedCredential(req);
    if (credential === undefined)
      throw unauthenticated('missing credential: send Authorization: Bearer <key> or x-api-key');
    const principal = await this.authenticate(credential, {
      cacheWorkspaceKey: route.rechecksWorkspaceKey,
    });
    if (!principal) throw unauthenticated('invalid or revoked credential');
    if (!route.allowed.includes(principal.kind)) {
      // A Work token that is no longer usable is simply invalid; a live one is valid but out of scope.
      requireLiveToken(principal);
      throw permissionDenied(`a ${describeKind(principal.kind)} may not perform this request`);
    }
    req.principal = principal;
    return true;
  }

  /**
   * A route's `@Public()` and `@AllowCredentials()` (handler over class), read once per handler: route
   * metadata is fixed at boot, so each request need not walk it again.
   */
  private routeAccess(context: ExecutionContext): RouteAccess {
    const handler = context.getHandler();
    let access = this.routes.get(handler);
    if (!access) {
      const targets = [handler, context.getClass()];
      access = {
        public: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true,
        rechecksWorkspaceKey:
          this.reflector.getAllAndOverride<boolean>(RECHECKS_WORKSPACE_KEY, targets) === true,
        allowed: this.reflector.getAllAndOverride<PrincipalKind[]>(ALLOWED_CREDENTIALS, targets) ?? [
          'workspace',
        ],
      };
      this.routes.set(handler, access);
    }
    return access;
  }

  /** `cacheWorkspaceKey`: the route re-checks a Workspace key itself, so a cached principal may answer. */
  async authenticate(
    credential: string,
    opts: { cacheWorkspaceKey?: boolean } = {},
  ): Promise<Principal | null> {
    const kind = credentialKindOf(credential);
    if (!kind) return null;
    if (kind === 'workToken')
      return this.workTokens ? this.workTokens.authenticate(digestCredential(credential)) : null;
    const cacheable = kind === 'environmentKey' || opts.cacheWorkspaceKey === true;
    const cacheKey = credentialDigestKey(credential);
    if (cacheable) {
      const hit = this.principals.get(cacheKey);
      if (hit && hit.until > Date.now()) return hit.principal;
      if (hit) this.principals.delete(cacheKey);
    }
    const rows: Array<{ id: string; workspace_id: string; environment_id: string | null }> =
      await this.dataSource.query(
        `SELECT k.id, k.workspace_id, k.environment_id
         FROM api_keys k
         LEFT JOIN environments e ON e.id = k.environment_id
        WHERE k.digest = $1 AND k.revoked_at IS NULL
          AND (k.environment_id IS NULL OR e.deleted_at IS NULL)`,
        [Buffer.from(cacheKey, 'base64')],
      );
    const row = rows[0];
    if (!row) return null;
    let principal: Principal | null = null;
    if (kind === 'workspaceKey' && row.environment_id === null)
      principal = { kind: 'workspace', workspaceId: row.workspace_id, keyId: row.id };
    if (kind === 'environmentKey' && row.environment_id !== null)
      principal = {
        kind: 'environment',
        workspaceId: row.workspace_id,
        environmentId: row.environment_id,
        keyId: row.id,
      };
    // Any successful look-up is kept (a Workspace key's too: only marked routes read it back).
    if (principal) this.remember(cacheKey, principal);
    return principal;
  }

  private remember(cacheKey: string, principal: Principal): void {
    this.principals.delete(cacheKey);
    if (this.principals.size >= PRINCIPAL_CACHE_MAX) {
      const oldest = this.principals.keys().next().value;
      if (oldest !== undefined) this.principals.delete(oldest);
    }
    this.principals.set(cacheKey, { principal, until: Date.now() + PRINCIPAL_CACHE_TTL_MS });
  }
}

function describeKind(kind: PrincipalKind): string {
  switch (kind) {
    case 'workspace':
      return 'Workspace API key';
    case 'environment':
      return 'Environment key';
    case 'work':
      return 'Work token';
  }
}
