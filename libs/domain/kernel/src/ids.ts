/**
 * The id format, the one home of it (ADR 0006): every resource id is a prefix plus a 26-character ULID,
 * opaque to clients and sortable by creation time. Pure, so domain code, the worker and the apps' env
 * checks all use it; minting ids (`newId`, which needs a ULID generator) lives in `@mango/platform-ids`.
 */
export const ID_PREFIXES = {
  agent: 'agent_',
  session: 'sesn_',
  sessionEvent: 'sevt_',
  sessionThread: 'sthr_',
  outcome: 'outc_',
  environment: 'env_',
  work: 'work_',
  file: 'file_',
  skill: 'skill_',
  memoryStore: 'memstore_',
  memory: 'mem_',
  memoryVersion: 'memver_',
  vault: 'vlt_',
  vaultCredential: 'vcrd_',
  deployment: 'depl_',
  deploymentRun: 'drun_',
  webhook: 'webhook_',
  webhookEvent: 'whe_',
  webhookDelivery: 'whdlv_',
  apiKey: 'key_',
  workspace: 'wrkspc_',
  request: 'req_',
  auditEntry: 'audit_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** Crockford base32, 26 characters: the ULID part of every id. */
export const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';

export const DEFAULT_WORKSPACE_ID = 'wrkspc_default';

const patterns = new Map<IdKind, RegExp>();

/** The anchored pattern of one kind's ids (ULID ids only: `wrkspc_default` does not match it). */
export function idPattern(kind: IdKind): RegExp {
  let re = patterns.get(kind);
  if (!re) {
    re = new RegExp(`^${ID_PREFIXES[kind]}${ULID_PATTERN}$`);
    patterns.set(kind, re);
  }
  return re;
}

/**
 * True when `value` is a well-formed id of this kind. The default Workspace (`wrkspc_default`) is the
 * one id that is not a ULID.
 */
export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (kind === 'workspace' && value === DEFAULT_WORKSPACE_ID) return true;
  return idPattern(kind).test(value);
}
