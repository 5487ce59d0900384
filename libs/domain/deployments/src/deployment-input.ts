import {
  idPattern,
  invalidRequest,
  Metadata,
  parseMetadata,
  readArray,
  readInteger,
  readObject,
  readOptionalString,
  readString,
} from '@mango/domain-kernel';
import { MemoryAttachmentInput, parseMemoryAttachments } from '@mango/domain-memory';
import {
  Budget,
  ClientEvent,
  parseBudget,
  parseClientEvent,
  parseVaultIds as parseSessionVaultIds,
} from '@mango/domain-sessions';
import { parseCron, parseTimezone, scheduleJitterMs } from './cron';

/** Hosted §2.12 limits. */
export const DEPLOYMENT_LIMITS = {
  name: 256,
  description: 2048,
  initialEvents: 50,
  resources: 500,
} as const;

/** Hosted §3.11 auto-pause error types; a run error is one of these or a run-only one. */
export const PAUSE_ERROR_TYPES = [
  'environment_archived_error',
  'agent_archived_error',
  'environment_not_found_error',
  'vault_not_found_error',
  'file_not_found_error',
  'session_resource_not_found_error',
  'workspace_archived_error',
  'organization_disabled_error',
  'memory_store_archived_error',
  'skill_not_found_error',
  'vault_archived_error',
  'unknown_error',
  'self_hosted_resources_unsupported_error',
  'mcp_egress_blocked_error',
] as const;
export const RUN_ONLY_ERROR_TYPES = [
  'session_rate_limited_error',
  'session_creation_rejected_error',
] as const;
export type PauseErrorType = (typeof PAUSE_ERROR_TYPES)[number];
export type RunErrorType = PauseErrorType | (typeof RUN_ONLY_ERROR_TYPES)[number];

const AGENT_ID = idPattern('agent');
const ENV_ID = idPattern('environment');

export interface CronSchedule {
  type: 'cron';
  expression: string;
  timezone: string;
  /** Derived: the schedule jitter for this expression (docs/api-guide.md, Deployments). */
  jitterMs: number;
}

export interface DeploymentFields {
  name: string;
  description: string | null;
  agent: { id: string; version: number | null };
  environmentId: string;
  initialEvents: ClientEvent[];
  schedule: CronSchedule | null;
  resources: MemoryAttachmentInput[];
  /** Vaults each run attaches to its Session (their credentials authenticate MCP calls). */
  vaultIds: string[];
  budget: Budget | null;
  metadata: Metadata;
}

export const DEPLOYMENT_FIELDS = [
  'name',
  'description',
  'agent',
  'environment_id',
  'initial_events',
  'schedule',
  'resources',
  'vault_ids',
  'budget',
  'metadata',
];

/** `agent`: an id (pinned to the current version when the Deployment is written) or `{type:"agent", id, version}`. */
export function parseDeploymentAgent(v: unknown): { id: string; version: number | null } {
  if (typeof v === 'string') {
    if (!AGENT_ID.test(v)) throw invalidRequest('agent must be an agent_ id');
    return { id: v, version: null };
  }
  const o = readObject(v, 'agent', ['type', 'id', 'version']);
  if (o.type !== 'agent') throw invalidRequest('agent.type must be "agent"');
  const id = readString(o.id, 'agent.id');
  if (!AGENT_ID.test(id)) throw invalidRequest('agent.id must be an agent_ id');
  const version =
    o.version === undefined || o.version === null
      ? null
      : readInteger(o.version, 'agent.version', { min: 1 });
  return { id, version };
}

export function parseSchedule(v: unknown): CronSchedule | null {
  if (v === null) return null;
  const o = readObject(v, 'schedule', ['type', 'expression', 'timezone']);
  if (o.type !== 'cron') throw invalidRequest('schedule.type must be "cron"');
  if (o.expression === undefined) throw invalidRequest('schedule.expression is required');
  if (o.timezone === undefined) throw invalidRequest('schedule.timezone is required');
  const cron = parseCron(o.expression);
  return {
    type: 'cron',
    expression: cron.expression,
    timezone: parseTimezone(o.timezone),
    jitterMs: scheduleJitterMs(cron),
  };
}

/** 1–50 events; Mango Sessions start from `user.message` only (define_outcome and system.message are refused). */
export function parseInitialEvents(v: unknown): ClientEvent[] {
  const raw = readArray(v, 'initial_events', { min: 1, max: DEPLOYMENT_LIMITS.initialEvents });
  return raw.map((e, i) => {
    const type = (e as { type?: unknown } | null)?.type;
    if (type === 'user.define_outcome' || type === 'system.message')
      throw invalidRequest(
        `initial_events[${i}]: ${String(type)} is not supported by Mango Sessions at creation (only user.message)`,
      );
    const parsed = parseClientEvent(e, `initial_events[${i}]`);
    if (parsed.type !== 'user.message')
      throw invalidRequest(`initial_events[${i}]: only user.message is allowed`);
    return parsed;
  });
}

/**
 * `vault_ids`: each run attaches these Vaults to the Session it creates, so the Session's own rule
 * applies (up to 20 distinct `vlt_` ids; existence and archival are checked when the Deployment is
 * written and again at every run). docs/api-guide.md, "Deployments".
 */
export function parseVaultIds(v: unknown): string[] {
  return parseSessionVaultIds(v);
}

function parseResources(v: unknown): MemoryAttachmentInput[] {
  if (v === undefined || v === null) return [];
  const list = readArray(v, 'resources', { max: DEPLOYMENT_LIMITS.resources });
  list.forEach((r, i) => {
    const t = (r as { type?: unknown } | null)?.type;
    if (t === 'file' || t === 'github_repository')
      throw invalidRequest(
        `resources[${i}]: ${t} resources are not supported with self-hosted environments (only memory_store)`,
      );
  });
  return parseMemoryAttachments(list);
}

export function parseDeploymentCreate(body: unknown): DeploymentFields {
  const o = readObject(body, 'body', DEPLOYMENT_FIELDS);
  for (const f of ['name', 'agent', 'environment_id', 'initial_events'])
    if (o[f] === undefined) throw invalidRequest(`${f} is required`);
  const environmentId = readString(o.environment_id, 'environment_id');
  if (!ENV_ID.test(environmentId)) throw invalidRequest('environment_id must be an env_ id');
  return {
    name: readString(o.name, 'name', { min: 1, max: DEPLOYMENT_LIMITS.name }),
    description:
      readOptionalString(o.description, 'description', { max: DEPLOYMENT_LIMITS.description }) ?? null,
    agent: parseDeploymentAgent(o.agent),
    environmentId,
    initialEvents: parseInitialEvents(o.initial_events),
    schedule: o.schedule === undefined ? null : parseSchedule(o.schedule),
    resources: parseResources(o.resources),
    vaultIds: parseVaultIds(o.vault_ids),
    budget: o.budget === undefined || o.budget === null ? null : parseBudget(o.budget),
    metadata: parseMetadata(o.metadata),
  };
}

/** An update: every field optional; arrays replace; `metadata` is a patch (returned raw); null clears schedule/budget/resources. */
export function parseDeploymentUpdate(
  body: unknown,
): Partial<Omit<DeploymentFields, 'metadata'>> & { metadata?: unknown } {
  const o = readObject(body, 'body', DEPLOYMENT_FIELDS);
  const out: Partial<Omit<DeploymentFields, 'metadata'>> & { metadata?: unknown } = {};
  if (o.vault_ids !== undefined) out.vaultIds = parseVaultIds(o.vault_ids);
  if (o.name !== undefined) {
    if (o.name === null) throw invalidRequest('name cannot be cleared');
    out.name = readString(o.name, 'name', { min: 1, max: DEPLOYMENT_LIMITS.name });
  }
  if (o.description !== undefined)
    out.description =
      readOptionalString(o.description, 'description', { max: DEPLOYMENT_LIMITS.description }) ?? null;
  if (o.agent !== undefined) out.agent = parseDeploymentAgent(o.agent);
  if (o.environment_id !== undefined) {
    const e = readString(o.environment_id, 'environment_id');
    if (!ENV_ID.test(e)) throw invalidRequest('environment_id must be an env_ id');
    out.environmentId = e;
  }
  if (o.initial_events !== undefined) out.initialEvents = parseInitialEvents(o.initial_events);
  if (o.schedule !== undefined) out.schedule = parseSchedule(o.schedule);
  if (o.resources !== undefined) out.resources = parseResources(o.resources);
  if (o.budget !== undefined) out.budget = o.budget === null ? null : parseBudget(o.budget);
  if (o.metadata !== undefined) out.metadata = o.metadata;
  return out;
}
