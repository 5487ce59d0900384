import { notFound, permissionDenied } from '@mango/domain-kernel';
import type { Principal } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';

export type WorkPrincipal = Extract<Principal, { kind: 'work' }>;
export type EnvPrincipal = Extract<Principal, { kind: 'environment' }>;

/** Poll and Ack: only this Environment's own key. */
export function environmentPrincipal(p: Principal, environmentId: string): EnvPrincipal {
  if (p.kind !== 'environment') throw permissionDenied('Poll and Ack need the Environment key');
  if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
  if (p.environmentId !== environmentId)
    throw permissionDenied('this Environment key belongs to another Environment');
  return p;
}

/** Heartbeat, Result, Fail (and Stop by token): only this Work item's own token. */
export function workPrincipal(p: Principal, environmentId: string, workId: string): WorkPrincipal {
  if (p.kind !== 'work') throw permissionDenied('only the Work token may do this');
  if (!isId('environment', environmentId)) throw notFound('environment', environmentId);
  if (!isId('work', workId)) throw notFound('work', workId);
  if (p.environmentId !== environmentId || p.workId !== workId)
    throw permissionDenied('this Work token belongs to another Work item');
  return p;
}
