import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal, PrincipalKind } from './principal';

export const ALLOWED_CREDENTIALS = 'mango:allowed-credentials';

/**
 * The credential kinds a route accepts. Routes without it accept only Workspace API keys; anything
 * else authenticated is 403 `permission_error`.
 */
export const AllowCredentials = (...kinds: PrincipalKind[]) => SetMetadata(ALLOWED_CREDENTIALS, kinds);

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<Request>().principal;
  if (!principal) throw new Error('no principal: route is missing the auth guard');
  return principal;
});
