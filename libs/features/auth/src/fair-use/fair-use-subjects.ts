import type { Principal } from '../principal';
import type { BucketRule } from './token-buckets';
import type { FairUseSettings } from './fair-use.settings';

export type FairUseScope = 'credential' | 'workspace';

/**
 * Whom a request counts against: its credential (a Workspace or Environment key by key id, a Work token by
 * its Work item) and its Workspace (every credential of the Workspace together). Key spaces are disjoint.
 */
export function requestSubjects(
  p: Principal,
  s: FairUseSettings,
): Array<{ key: string; rule: BucketRule; kind: FairUseScope }> {
  const credential =
    p.kind === 'work'
      ? { key: `work:${p.workId}`, rule: s.workTokenRequests, kind: 'credential' as const }
      : { key: `key:${p.keyId}`, rule: s.keyRequests, kind: 'credential' as const };
  return [credential, { key: `ws:${p.workspaceId}`, rule: s.workspaceRequests, kind: 'workspace' }];
}

/** The stream slots an open stream holds: its credential's and its Workspace's (only the limits that are set). */
export function streamSubjects(
  p: Principal,
  s: FairUseSettings,
): Array<{ key: string; limit: number; kind: FairUseScope }> {
  const credential = p.kind === 'work' ? `work:${p.workId}` : `key:${p.keyId}`;
  return [
    ...(s.credentialStreams !== null
      ? [{ key: credential, limit: s.credentialStreams, kind: 'credential' as const }]
      : []),
    ...(s.workspaceStreams !== null
      ? [{ key: `ws:${p.workspaceId}`, limit: s.workspaceStreams, kind: 'workspace' as const }]
      : []),
  ];
}

/** How a refusal names what refused it (no secrets: a key's id and a Workspace's id are not secret). */
export function describeSubject(p: Principal, scope: FairUseScope): string {
  if (scope === 'workspace') return `workspace ${p.workspaceId}`;
  switch (p.kind) {
    case 'workspace':
      return `API key ${p.keyId}`;
    case 'environment':
      return `Environment key ${p.keyId}`;
    case 'work':
      return `the Work token of ${p.workId}`;
  }
}
