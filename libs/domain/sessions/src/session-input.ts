import { MemoryAttachmentInput, parseMemoryAttachments } from '@mango/domain-memory';
import {
  AGENT_LIMITS,
  AgentDefinition,
  AgentTool,
  checkCrossFieldRules,
  McpServer,
  ModelConfig,
  parseMcpServers,
  parseModel,
  parseSkills,
  parseTools,
  SkillPin,
} from '@mango/domain-agents';
import {
  DomainError,
  ErrorCode,
  idPattern,
  invalidRequest,
  parseMetadata,
  readArray,
  readEnum,
  PG_INTEGER_MAX,
  readInteger,
  readObject,
  readOptionalString,
  readString,
} from '@mango/domain-kernel';
import { isRunnableKind } from './event-kinds';
import { DefineOutcome, parseDefineOutcome } from './outcome';

/** Rules for Session creation input (openapi.yaml `SessionCreateRequest`; docs/api-guide.md "Sessions — choices"): pure, no I/O. */
export const SESSION_LIMITS = {
  title: 512,
  initialEvents: 50,
  eventsPerRequest: 100,
  textBlock: 1_000_000,
  contentBlocks: 1000,
} as const;

const AGENT_ID = idPattern('agent');
const ENV_ID = idPattern('environment');

export interface AgentOverrides {
  model?: ModelConfig;
  system?: string | null;
  tools?: AgentTool[];
  mcp_servers?: McpServer[];
  skills?: SkillPin[];
}

export interface AgentSelection {
  id: string;
  /** null = the Agent's current version. */
  version: number | null;
  overrides: AgentOverrides | null;
}

export interface Budget {
  type: 'limit';
  max_list_cost: { amount: string; currency: 'USD' };
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | {
      type: 'document';
      /** `file` sources exist only between parsing and admission, which replaces them with the text. */
      source: { type: 'text'; media_type: 'text/plain'; data: string } | { type: 'file'; file_id: string };
      title?: string | null;
      context?: string | null;
    };

export type ClientEvent =
  | { type: 'user.message'; content: ContentBlock[] }
  | { type: 'user.interrupt'; session_thread_id?: string }
  | {
      type: 'user.tool_result';
      tool_use_id: string;
      content: Array<{ type: 'text'; text: string }>;
      is_error: boolean;
      /** The call's Thread, echoed by the client (checked against the call's; never stored in the body). */
      session_thread_id?: string;
    }
  | {
      type: 'user.tool_confirmation';
      tool_use_id: string;
      result: 'allow' | 'deny';
      deny_message?: string;
      session_thread_id?: string;
    }
  | {
      type: 'user.custom_tool_result';
      custom_tool_use_id: string;
      content: Array<{ type: 'text'; text: string }>;
      is_error: boolean;
      session_thread_id?: string;
    }
  | DefineOutcome;

export interface SessionCreateInput {
  agent: AgentSelection;
  environmentId: string;
  title: string | null;
  initialEvents: ClientEvent[];
  budget: Budget | null;
  metadata: Record<string, string>;
  /** Memory Stores to attach (`attachSessionMemoryStores` in the creating transaction). */
  resources: MemoryAttachmentInput[];
  /** Vaults whose credentials authenticate the Session's MCP calls, in request order. */
  vaultIds: string[];
}

export function parseAgentSelection(v: unknown): AgentSelection {
  if (typeof v === 'string') {
    if (!AGENT_ID.test(v)) throw invalidRequest('agent must be an agent_ id');
    return { id: v, version: null, overrides: null };
  }
  const o = readObject(v, 'agent');
  const type = readEnum(o.type, 'agent.type', ['agent', 'agent_with_overrides'] as const);
  const allowed =
    type === 'agent'
      ? ['type', 'id', 'version']
      : ['type', 'id', 'version', 'model', 'system', 'tools', 'mcp_servers', 'skills'];
  readObject(v, 'agent', allowed);
  const id = readString(o.id, 'agent.id');
  if (!AGENT_ID.test(id)) throw invalidRequest('agent.id must be an agent_ id');
  const version =
    o.version === undefined || o.version === null
      ? null
      : readInteger(o.version, 'agent.version', { min: 1, max: PG_INTEGER_MAX });
  if (type === 'agent') return { id, version, overrides: null };
  const overrides: AgentOverrides = {};
  if (o.model !== undefined) overrides.model = parseModel(o.model);
  if (o.system !== undefined)
    overrides.system = readOptionalString(o.system, 'agent.system', { max: AGENT_LIMITS.system }) ?? null;
  if (o.tools !== undefined) overrides.tools = parseTools(o.tools);
  if (o.mcp_servers !== undefined) overrides.mcp_servers = parseMcpServers(o.mcp_servers);
  if (o.skills !== undefined) overrides.skills = parseSkills(o.skills);
  return { id, version, overrides };
}

export function parseBudget(v: unknown): Budget {
  const o = readObject(v, 'budget', ['type', 'max_list_cost']);
  readEnum(o.type, 'budget.type', ['limit'] as const);
  const cost = readObject(o.max_list_cost, 'budget.max_list_cost', ['amount', 'currency']);
  const amount = readString(cost.amount, 'budget.max_list_cost.amount', {
    pattern: /^(0|[1-9][0-9]{0,15})$/,
  });
  readEnum(cost.currency, 'budget.max_list_cost.currency', ['USD'] as const);
  return { type: 'limit', max_list_cost: { amount, currency: 'USD' } };
}

function parseContent(v: unknown, path: string): ContentBlock[] {
  const blocks = readArray(v, path, { min: 1, max: SESSION_LIMITS.contentBlocks });
  return blocks.map((b, i): ContentBlock => {
    const p = `${path}[${i}]`;
    const o = readObject(b, p);
    const type = readEnum(o.type, `${p}.type`, ['text', 'document', 'image'] as const);
    switch (type) {
      case 'text':
        readObject(b, p, ['type', 'text']);
        return {
          type: 'text',
          text: readString(o.text, `${p}.text`, { min: 1, max: SESSION_LIMITS.textBlock }),
        };
      case 'image':
        throw invalidRequest(`${p}: images are not supported; send text or a bounded UTF-8 text document`);
      case 'document': {
        readObject(b, p, ['type', 'source', 'title', 'context']);
        const src = readObject(o.source, `${p}.source`);
        if (src.type === 'file') {
          readObject(o.source, `${p}.source`, ['type', 'file_id']);
          const fileId = readString(src.file_id, `${p}.source.file_id`);
          if (!FILE_ID.test(fileId)) throw invalidRequest(`${p}.source.file_id must be a file_ id`);
          // Resolved to bounded UTF-8 text at admission (FileTextReader), before anything is written.
          return {
            type: 'document',
            source: { type: 'file', file_id: fileId },
            title: readOptionalString(o.title, `${p}.title`, { max: 500 }) ?? null,
            context: readOptionalString(o.context, `${p}.context`, { max: 10_000 }) ?? null,
          };
        }
        if (src.type === 'base64' && src.media_type === 'application/pdf')
          throw invalidRequest(`${p}.source: PDFs are not supported; send UTF-8 text`);
        readObject(o.source, `${p}.source`, ['type', 'media_type', 'data']);
        readEnum(src.type, `${p}.source.type`, ['text'] as const);
        readEnum(src.media_type, `${p}.source.media_type`, ['text/plain'] as const);
        return {
          type: 'document',
          source: {
            type: 'text',
            media_type: 'text/plain',
            data: readString(src.data, `${p}.source.data`, { max: SESSION_LIMITS.textBlock }),
          },
          title: readOptionalString(o.title, `${p}.title`, { max: 500 }) ?? null,
          context: readOptionalString(o.context, `${p}.context`, { max: 10_000 }) ?? null,
        };
      }
    }
  });
}

const THREAD_ID = idPattern('sessionThread');
const FILE_ID = idPattern('file');
const SEVT_ID = idPattern('sessionEvent');
/** The events a `system.message` may immediately follow in the same request (openapi.yaml `SessionEventsSendRequest`). */
const SYSTEM_MESSAGE_FOLLOWS = ['user.message', 'user.tool_result', 'user.custom_tool_result'];

function readSevt(v: unknown, path: string, of: string): string {
  const id = readString(v, path);
  if (!SEVT_ID.test(id)) throw invalidRequest(`${path} must be the sevt_ id of an ${of} event`);
  return id;
}

function readResultContent(v: unknown, path: string): Array<{ type: 'text'; text: string }> {
  if (v === undefined || v === null) return [];
  return readArray(v, path, { max: SESSION_LIMITS.contentBlocks }).map((b, i) => {
    const bo = readObject(b, `${path}[${i}]`, ['type', 'text']);
    readEnum(bo.type, `${path}[${i}].type`, ['text'] as const);
    return {
      type: 'text' as const,
      text: readString(bo.text, `${path}[${i}].text`, { max: SESSION_LIMITS.textBlock }),
    };
  });
}

function readIsError(v: unknown, path: string): boolean {
  if (v !== undefined && v !== null && typeof v !== 'boolean')
    throw invalidRequest(`${path}.is_error must be a boolean`);
  return v === true;
}

/** One client event (openapi.yaml `SessionEventsSendRequest`): messages, interrupts, answers, `user.define_outcome`, and (from a Work token) `user.tool_result`. */
export function parseClientEvent(v: unknown, path: string): ClientEvent {
  const o = readObject(v, path);
  if (o.type === 'system.message')
    throw invalidRequest(
      `${path}: system.message is only sent in POST /v1/sessions/{id}/events, last, right after a user.message, user.tool_result or user.custom_tool_result`,
    );
  const type = readEnum(o.type, `${path}.type`, [
    'user.message',
    'user.interrupt',
    'user.tool_result',
    'user.tool_confirmation',
    'user.custom_tool_result',
    'user.define_outcome',
  ] as const);
  switch (type) {
    case 'user.define_outcome':
      return parseDefineOutcome(v, path);
    case 'user.message':
      readObject(v, path, ['type', 'content']);
      return { type, content: parseContent(o.content, `${path}.content`) };
    case 'user.interrupt': {
      readObject(v, path, ['type', 'session_thread_id']);
      if (o.session_thread_id === undefined || o.session_thread_id === null) return { type };
      const t = readString(o.session_thread_id, `${path}.session_thread_id`);
      if (!THREAD_ID.test(t)) throw invalidRequest(`${path}.session_thread_id must be a sthr_ id`);
      return { type, session_thread_id: t };
    }
    case 'user.tool_result': {
      readObject(v, path, ['type', 'tool_use_id', 'content', 'is_error', 'session_thread_id']);
      const id = readSevt(o.tool_use_id, `${path}.tool_use_id`, 'agent.tool_use');
      return {
        type,
        tool_use_id: id,
        content: readResultContent(o.content, `${path}.content`),
        is_error: readIsError(o.is_error, path),
        ...echoedThread(o.session_thread_id, path),
      };
    }
    case 'user.custom_tool_result': {
      readObject(v, path, ['type', 'custom_tool_use_id', 'content', 'is_error', 'session_thread_id']);
      const id = readSevt(o.custom_tool_use_id, `${path}.custom_tool_use_id`, 'agent.custom_tool_use');
      return {
        type,
        custom_tool_use_id: id,
        content: readResultContent(o.content, `${path}.content`),
        is_error: readIsError(o.is_error, path),
        ...echoedThread(o.session_thread_id, path),
      };
    }
    case 'user.tool_confirmation': {
      readObject(v, path, ['type', 'tool_use_id', 'result', 'deny_message', 'session_thread_id']);
      const id = readSevt(o.tool_use_id, `${path}.tool_use_id`, 'agent.tool_use');
      const result = readEnum(o.result, `${path}.result`, ['allow', 'deny'] as const);
      if (o.deny_message !== undefined && o.deny_message !== null && result !== 'deny') {
        throw invalidRequest(`${path}.deny_message is only allowed with result "deny"`);
      }
      const deny = readOptionalString(o.deny_message, `${path}.deny_message`, { max: 10_000 });
      const thread = echoedThread(o.session_thread_id, path);
      return deny
        ? { type, tool_use_id: id, result, deny_message: deny, ...thread }
        : { type, tool_use_id: id, result, ...thread };
    }
  }
}

/** An answer's echoed `session_thread_id` (absent or null: none), validated as a Thread id. */
function echoedThread(v: unknown, path: string): { session_thread_id?: string } {
  if (v === undefined || v === null) return {};
  const t = readString(v, `${path}.session_thread_id`);
  if (!THREAD_ID.test(t)) throw invalidRequest(`${path}.session_thread_id must be a sthr_ id`);
  return { session_thread_id: t };
}

export function parseEventsBody(body: unknown): ClientEvent[] {
  const o = readObject(body, 'body', ['events']);
  const raw = readArray(o.events, 'events', { min: 1, max: SESSION_LIMITS.eventsPerRequest });
  const last = raw.length - 1;
  if (raw.length && (raw[last] as { type?: unknown } | null)?.type === 'system.message') {
    checkSystemMessage(raw, last);
    raw.slice(0, last).forEach((e, i) => parseClientEvent(e, `events[${i}]`));
    // Placement and shapes are valid; the Messages API has no mid-conversation system role, so the model
    // gate refuses it (the whole request, like any refused event).
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `events[${last}]: the configured model endpoint does not support mid-conversation system messages (model_does_not_support_mid_conversation_system)`,
      { reason: 'model_does_not_support_mid_conversation_system' },
    );
  }
  const events = raw.map((e, i) => parseClientEvent(e, `events[${i}]`));
  if (events.filter((e) => e.type === 'user.define_outcome').length > 1)
    throw invalidRequest('events: at most one user.define_outcome per request');
  return events;
}

/**
 * `system.message` rules (openapi.yaml `SessionEventsSendRequest`): at most one per request, last, immediately after a
 * `user.message`, `user.tool_result` or `user.custom_tool_result`; `content` is text blocks.
 */
function checkSystemMessage(raw: unknown[], at: number): void {
  const path = `events[${at}]`;
  const o = readObject(raw[at], path, ['type', 'content']);
  readArray(o.content, `${path}.content`, { min: 1, max: SESSION_LIMITS.contentBlocks }).forEach((b, i) => {
    const block = readObject(b, `${path}.content[${i}]`, ['type', 'text']);
    readEnum(block.type, `${path}.content[${i}].type`, ['text'] as const);
    readString(block.text, `${path}.content[${i}].text`, { min: 1, max: SESSION_LIMITS.textBlock });
  });
  const before = (raw[at - 1] as { type?: unknown } | undefined)?.type;
  if (typeof before !== 'string' || !SYSTEM_MESSAGE_FOLLOWS.includes(before))
    throw invalidRequest(
      `${path}: a system.message must immediately follow a user.message, user.tool_result or user.custom_tool_result in the same request`,
    );
}

export function parseSessionCreate(body: unknown): SessionCreateInput {
  const o = readObject(body, 'body', [
    'agent',
    'environment_id',
    'title',
    'initial_events',
    'budget',
    'metadata',
    'resources',
    'vault_ids',
  ]);
  if (o.agent === undefined) throw invalidRequest('agent is required');
  if (o.environment_id === undefined) throw invalidRequest('environment_id is required');
  const environmentId = readString(o.environment_id, 'environment_id');
  if (!ENV_ID.test(environmentId)) throw invalidRequest('environment_id must be an env_ id');
  // Self-hosted Environments accept only create-time memory_store resources (Memory Stores).
  const resources = parseMemoryAttachments(o.resources);
  const vaultIds = parseVaultIds(o.vault_ids);
  const initial =
    o.initial_events === undefined || o.initial_events === null
      ? []
      : readArray(o.initial_events, 'initial_events', { max: SESSION_LIMITS.initialEvents });
  const initialEvents = initial.map((e, i) => {
    const parsed = parseClientEvent(e, `initial_events[${i}]`);
    if (parsed.type !== 'user.message' && parsed.type !== 'user.define_outcome')
      throw invalidRequest(
        `initial_events[${i}]: only user.message and user.define_outcome are allowed at creation`,
      );
    return parsed;
  });
  if (initialEvents.filter((e) => e.type === 'user.define_outcome').length > 1)
    throw invalidRequest('initial_events: at most one user.define_outcome');
  return {
    agent: parseAgentSelection(o.agent),
    environmentId,
    title: readOptionalString(o.title, 'title', { max: SESSION_LIMITS.title }) ?? null,
    initialEvents,
    budget: o.budget === undefined || o.budget === null ? null : parseBudget(o.budget),
    metadata: parseMetadata(o.metadata),
    resources,
    vaultIds,
  };
}

/** Most Vaults one Session may attach. */
export const MAX_SESSION_VAULTS = 20;
const VAULT_ID = idPattern('vault');

/** `vault_ids`: up to 20 distinct `vlt_` ids (absent or null: none). Existence is checked by the service. */
export function parseVaultIds(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const ids = readArray(v, 'vault_ids', { max: MAX_SESSION_VAULTS }).map((id, i) => {
    const s = readString(id, `vault_ids[${i}]`);
    if (!VAULT_ID.test(s)) throw invalidRequest(`vault_ids[${i}] must be a vlt_ id`);
    return s;
  });
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw invalidRequest(`vault_ids lists ${dup} twice`);
  return ids;
}

/**
 * The frozen Agent a Session runs: the chosen version with any overrides applied (`id`/`version` name the
 * base). Overrides that make a definition the Agent itself would refuse are refused the same way.
 */
export function freezeAgent(
  id: string,
  version: number,
  definition: AgentDefinition,
  overrides: AgentOverrides | null,
) {
  const d = { ...definition, ...(overrides ?? {}) };
  if (overrides) checkCrossFieldRules(d);
  return {
    id,
    type: 'agent' as const,
    version,
    name: d.name,
    description: d.description,
    system: d.system,
    model: d.model,
    tools: d.tools,
    mcp_servers: d.mcp_servers,
    skills: d.skills,
    multiagent: d.multiagent,
  };
}

export type SessionAgent = ReturnType<typeof freezeAgent>;

/** Input that lets the agent continue (and so needs the Session's worker): see `isRunnableKind`. */
export const isRunnable = (e: ClientEvent): boolean => isRunnableKind(e.type);
