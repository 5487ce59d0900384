import { monotonicFactory } from 'ulid';

/** Every resource id is a prefix plus a 26-character ULID: opaque to clients, sortable by creation time. */
export const ID_PREFIXES = {
  agent: 'agent_',
  session: 'sesn_',
  sessionEvent: 'sevt_',
  sessionThread: 'sthr_',
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
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';
const nextUlid = monotonicFactory();

export function newId(kind: IdKind, now: number = Date.now()): string {
  return ID_PREFIXES[kind] + nextUlid(now);
}

const patterns = new Map<IdKind, RegExp>();

/**
 * True when `value` is a well-formed id of this kind. The default Workspace (`wrkspc_default`) is the
 * one id that is not a ULID.
 */
export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (kind === 'workspace' && value === DEFAULT_WORKSPACE_ID) return true;
  let re = patterns.get(kind);
  if (!re) {
    re = new RegExp(`^${ID_PREFIXES[kind]}${ULID_PATTERN}$`);
    patterns.set(kind, re);
  }
  return re.test(value);
}

export const DEFAULT_WORKSPACE_ID = 'wrkspc_default';
