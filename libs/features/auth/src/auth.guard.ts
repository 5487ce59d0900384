import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { permissionDenied, unauthenticated } from '@mango/domain-kernel';
import { PUBLIC_ROUTE } from '@mango/platform-http';
import type { Request } from 'express';
import { ALLOWED_CREDENTIALS, RECHECKS_WORKSPACE_KEY } from './allow-credentials.decorator';
import { requireLiveToken, type PrincipalKind } from './principal';
import { presentedCredential, RequestAuthenticator } from './request-authenticator';

interface RouteAccess {
  public: boolean;
  /** Credential kinds the route accepts (Workspace API keys only, unless it says otherwise). */
  allowed: readonly PrincipalKind[];
  /** `RechecksWorkspaceKey`: the route's statements re-check a Workspace key, so a cached one may answer. */
  rechecksWorkspaceKey: boolean;
}

/**
 * The route's rules over the request's credential: public routes pass; every other route needs the
 * principal `RequestAuthenticator` established from the headers (before the body was read; the same
 * answer, not a second look-up) and accepts only the kinds it allows.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly routes = new WeakMap<object, RouteAccess>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeAccess(context);
    if (route.public) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const answer = await this.authenticator.authenticateFromHeaders(req);
    if (!answer.ok) throw answer.error;
    let principal = answer.principal;
    // A cached Workspace key serves only routes that re-check it; the others look it up now.
    if (answer.cached && principal.kind === 'workspace' && !route.rechecksWorkspaceKey) {
      const fresh = await this.authenticator.authenticate(presentedCredential(req) ?? '');
      if (!fresh) {
        req.principal = undefined;
        throw unauthenticated('invalid or revoked credential');
      }
      principal = fresh;
    }
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
