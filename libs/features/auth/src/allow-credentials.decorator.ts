import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal, PrincipalKind } from './principal';

export const ALLOWED_CREDENTIALS = 'mango:allowed-credentials';

/**
 * The credential kinds a route accepts. Routes without it accept only Workspace API keys; anything
 * else authenticated is 403 `permission_error`.
 */
export const AllowCredentials = (...kinds: PrincipalKind[]) => SetMetadata(ALLOWED_CREDENTIALS, kinds);

export const RECHECKS_WORKSPACE_KEY = 'mango:rechecks-workspace-key';

/**
 * Marks a route whose reads and writes re-check the caller's Workspace key in the same statement
 * (`liveWorkspaceKey`), so the auth guard may answer it from its short-lived principal cache: a key
 * revoked meanwhile still gets 401 from that statement, and nothing is read or stored with it.
 */
export const RechecksWorkspaceKey = () => SetMetadata(RECHECKS_WORKSPACE_KEY, true);

/**
 * SQL that is true while Workspace key `$n` is unrevoked; what a `RechecksWorkspaceKey` route puts
 * into the statement that reads or writes. The one place this rule is written.
 */
export const liveWorkspaceKey = (param: string) =>
  `EXISTS (SELECT 1 FROM api_keys WHERE id = ${param} AND revoked_at IS NULL AND environment_id IS NULL)`;

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<Request>().principal;
  if (!principal) throw new Error('no principal: route is missing the auth guard');
  return principal;
});
