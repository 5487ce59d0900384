import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { permissionDenied, unauthenticated } from '@mango/domain-kernel';
import { PUBLIC_ROUTE } from '@mango/platform-http';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { ALLOWED_CREDENTIALS } from './allow-credentials.decorator';
import { credentialKindOf, digestCredential } from './credential';
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
 * Environment-key principals, remembered briefly per process so that a supervisor's Poll and Ack do not
 * cost an extra query each. Safe because every route an Environment key may call (Poll, Ack, stats)
 * re-checks the key inside its own transaction, holding the key's row FOR SHARE (WorkService.holdKey):
 * a revoked key passes this guard for at most the TTL and is refused by that check. Only successful
 * look-ups are kept; Workspace keys are looked up on every request.
 */
export const ENVIRONMENT_KEY_CACHE_TTL_MS = 10_000;
const ENVIRONMENT_KEY_CACHE_MAX = 10_000;

interface RouteAccess {
  public: boolean;
  /** Credential kinds the route accepts (Workspace API keys only, unless it says otherwise). */
  allowed: readonly PrincipalKind[];
}

@Injectable()
export class AuthGuard implements CanActivate {
  private readonly environmentKeys = new Map<string, { principal: Principal; until: number }>();
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
    const principal = await this.authenticate(credential);
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
        allowed: this.reflector.getAllAndOverride<PrincipalKind[]>(ALLOWED_CREDENTIALS, targets) ?? [
          'workspace',
        ],
      };
      this.routes.set(handler, access);
    }
    return access;
  }

  async authenticate(credential: string): Promise<Principal | null> {
    const kind = credentialKindOf(credential);
    if (!kind) return null;
    const digest = digestCredential(credential);
    if (kind === 'workToken') return this.workTokens ? this.workTokens.authenticate(digest) : null;
    const cacheKey = kind === 'environmentKey' ? digest.toString('hex') : undefined;
    if (cacheKey) {
      const hit = this.environmentKeys.get(cacheKey);
      if (hit && hit.until > Date.now()) return hit.principal;
      if (hit) this.environmentKeys.delete(cacheKey);
    }
    const rows: Array<{ id: string; workspace_id: string; environment_id: string | null }> =
      await this.dataSource.query(
        `SELECT k.id, k.workspace_id, k.environment_id
         FROM api_keys k
         LEFT JOIN environments e ON e.id = k.environment_id
        WHERE k.digest = $1 AND k.revoked_at IS NULL
          AND (k.environment_id IS NULL OR e.deleted_at IS NULL)`,
        [digest],
      );
    const row = rows[0];
    if (!row) return null;
    if (kind === 'workspaceKey' && row.environment_id === null)
      return { kind: 'workspace', workspaceId: row.workspace_id, keyId: row.id };
    if (kind === 'environmentKey' && row.environment_id !== null) {
      const principal: Principal = {
        kind: 'environment',
        workspaceId: row.workspace_id,
        environmentId: row.environment_id,
        keyId: row.id,
      };
      if (this.environmentKeys.size >= ENVIRONMENT_KEY_CACHE_MAX) {
        const oldest = this.environmentKeys.keys().next().value;
        if (oldest !== undefined) this.environmentKeys.delete(oldest);
      }
      this.environmentKeys.set(cacheKey!, { principal, until: Date.now() + ENVIRONMENT_KEY_CACHE_TTL_MS });
      return principal;
    }
    return null;
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
