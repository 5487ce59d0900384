import {
  applyMetadataPatch,
  canonicalJson,
  conflict,
  idPattern,
  invalidRequest,
  isObject,
  parseMetadata,
  PG_INTEGER_MAX,
  readArray,
  readBoolean,
  readEnum,
  readInteger,
  readObject,
  readOptionalString,
  readString,
} from '@mango/domain-kernel';
import {
  AGENT_LIMITS,
  AGENT_TOOLSET_TYPE,
  AgentDefinition,
  AgentTool,
  AgentToolset,
  BUILTIN_TOOL_NAMES,
  BuiltinToolConfig,
  CustomTool,
  EFFORT_LEVELS,
  McpServer,
  McpToolConfig,
  McpToolset,
  ModelConfig,
  Multiagent,
  PERMISSION_POLICY_TYPES,
  PermissionPolicy,
  RosterEntry,
  SkillPin,
  ToolsetDefaultConfig,
  WEB_TOOL_NAMES,
} from './agent-definition';

/** A roster entry before its agent version is resolved (`version: null` = that agent's latest). */
export type RosterDraft =
  | { type: 'agent'; id: string; version: number | null }
  | { type: 'self' }
  | { type: 'advisor'; model: string };
export type AgentDraft = Omit<AgentDefinition, 'multiagent'> & {
  multiagent: { type: 'coordinator'; agents: RosterDraft[] } | null;
};

const AGENT_ID = idPattern('agent');
const SKILL_ID = idPattern('skill');
const CUSTOM_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const HOSTNAME = /^(\*\.)?([A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}$/;

const CREATE_FIELDS = [
  'name',
  'model',
  'description',
  'system',
  'tools',
  'mcp_servers',
  'skills',
  'multiagent',
  'metadata',
] as const;
const UPDATE_FIELDS = [...CREATE_FIELDS, 'version'] as const;

// ---------------------------------------------------------------------------------------------------
// Scalars

function parsePolicy(v: unknown, path: string): PermissionPolicy {
  const o = readObject(v, path, ['type']);
  return { type: readEnum(o.type, `${path}.type`, PERMISSION_POLICY_TYPES) };
}

export function parseModel(v: unknown, previous?: ModelConfig): ModelConfig {
  if (typeof v === 'string') {
    const id = readString(v, 'model', { min: 1, max: 256 });
    return previous && previous.id === id && previous.effort ? { id, effort: previous.effort } : { id };
  }
  const o = readObject(v, 'model', ['id', 'effort', 'inference_geo', 'speed']);
  const model: ModelConfig = { id: readString(o.id, 'model.id', { min: 1, max: 256 }) };
  if (o.effort !== undefined && o.effort !== null) {
    const level =
      typeof o.effort === 'string' ? o.effort : readObject(o.effort, 'model.effort', ['type']).type;
    model.effort = { type: readEnum(level, 'model.effort', EFFORT_LEVELS) };
  } else if (o.effort === undefined && previous && previous.id === model.id && previous.effort) {
    // Same model, effort omitted: keep the stored effort. A new model id resets it.
    model.effort = previous.effort;
  }
  const geo = readOptionalString(o.inference_geo, 'model.inference_geo', { min: 1, max: 64 });
  if (geo) model.inference_geo = geo;
  if (o.speed !== undefined && o.speed !== null)
    model.speed = readEnum(o.speed, 'model.speed', ['standard', 'fast'] as const);
  return model;
}

// ---------------------------------------------------------------------------------------------------
// Tools

function parseDefaultConfig(v: unknown, path: string): ToolsetDefaultConfig {
  const resolved: ToolsetDefaultConfig = { enabled: true, permission_policy: { type: 'always_allow' } };
  if (v === undefined || v === null) return resolved;
  const o = readObject(v, path, ['enabled', 'permission_policy']);
  if (o.enabled !== undefined && o.enabled !== null)
    resolved.enabled = readBoolean(o.enabled, `${path}.enabled`);
  if (o.permission_policy !== undefined && o.permission_policy !== null) {
    resolved.permission_policy = parsePolicy(o.permission_policy, `${path}.permission_policy`);
  }
  return resolved;
}

function parseDomains(v: unknown, path: string): string[] {
  const list = readArray(v, path, { min: 1, max: AGENT_LIMITS.domains });
  return list.map((d, i) => readString(d, `${path}[${i}]`, { min: 1, max: 253, pattern: HOSTNAME }));
}

function parseBuiltinConfig(v: unknown, path: string, defaults: ToolsetDefaultConfig): BuiltinToolConfig {
  const base = ['name', 'type', 'enabled', 'permission_policy'];
  const pre = readObject(v, path);
  const name = readEnum(pre.name, `${path}.name`, BUILTIN_TOOL_NAMES);
  const extra =
    name === 'web_fetch'
      ? ['allowed_domains', 'blocked_domains', 'max_content_tokens']
      : name === 'web_search'
        ? ['allowed_domains', 'blocked_domains', 'user_location']
        : [];
  const o = readObject(v, path, [...base, ...extra]);
  if (o.type !== undefined && o.type !== name)
    throw invalidRequest(`${path}.type must equal its name "${name}"`);
  const config: BuiltinToolConfig = {
    name,
    type: name,
    enabled:
      o.enabled === undefined || o.enabled === null
        ? defaults.enabled
        : readBoolean(o.enabled, `${path}.enabled`),
    permission_policy:
      o.permission_policy === undefined || o.permission_policy === null
        ? defaults.permission_policy
        : parsePolicy(o.permission_policy, `${path}.permission_policy`),
  };
  if (o.allowed_domains !== undefined && o.blocked_domains !== undefined) {
    throw invalidRequest(`${path}: allowed_domains and blocked_domains are mutually exclusive`);
  }
  if (o.allowed_domains !== undefined)
    config.allowed_domains = parseDomains(o.allowed_domains, `${path}.allowed_domains`);
  if (o.blocked_domains !== undefined)
    config.blocked_domains = parseDomains(o.blocked_domains, `${path}.blocked_domains`);
  if (o.max_content_tokens !== undefined) {
    config.max_content_tokens =
      o.max_content_tokens === null
        ? null
        : readInteger(o.max_content_tokens, `${path}.max_content_tokens`, { min: 1, max: 1_000_000 });
  }
  if (o.user_location !== undefined) {
    if (o.user_location === null) config.user_location = null;
    else {
      const loc = readObject(o.user_location, `${path}.user_location`, [
        'type',
        'city',
        'region',
        'country',
        'timezone',
      ]);
      readEnum(loc.type, `${path}.user_location.type`, ['approximate'] as const);
      const country = readOptionalString(loc.country, `${path}.user_location.country`, {
        pattern: /^[A-Z]{2}$/,
      });
      config.user_location = {
        type: 'approximate',
        city: readOptionalString(loc.city, `${path}.user_location.city`, { min: 1, max: 255 }) ?? null,
        region: readOptionalString(loc.region, `${path}.user_location.region`, { min: 1, max: 255 }) ?? null,
        country: country ?? null,
        timezone:
          readOptionalString(loc.timezone, `${path}.user_location.timezone`, { min: 1, max: 255 }) ?? null,
      };
    }
  }
  return config;
}

function parseAgentToolset(o: Record<string, unknown>, path: string): AgentToolset {
  readObject(o, path, ['type', 'default_config', 'configs']);
  const default_config = parseDefaultConfig(o.default_config, `${path}.default_config`);
  const configs: BuiltinToolConfig[] = [];
  if (o.configs !== undefined && o.configs !== null) {
    const seen = new Set<string>();
    readArray(o.configs, `${path}.configs`, { max: BUILTIN_TOOL_NAMES.length }).forEach((c, i) => {
      const config = parseBuiltinConfig(c, `${path}.configs[${i}]`, default_config);
      if (seen.has(config.name))
        throw invalidRequest(`${path}.configs: tool "${config.name}" is configured twice`);
      seen.add(config.name);
      configs.push(config);
    });
  }
  // The resolved form lists every tool of the toolset, in a fixed order, with every key filled in.
  const resolved = BUILTIN_TOOL_NAMES.map(
    (name): BuiltinToolConfig =>
      configs.find((c) => c.name === name) ?? {
        name,
        type: name,
        enabled: default_config.enabled,
        permission_policy: default_config.permission_policy,
      },
  );
  // Web tools run at the model endpoint and require always_allow (see docs/api-guide.md, Agents).
  for (const web of resolved.filter((c) => (WEB_TOOL_NAMES as readonly string[]).includes(c.name))) {
    if (web.enabled && web.permission_policy.type !== 'always_allow') {
      throw invalidRequest(
        `${path}: ${web.name} runs at the model endpoint and requires permission_policy always_allow; configure it explicitly or disable it`,
      );
    }
  }
  return { type: AGENT_TOOLSET_TYPE, default_config, configs: resolved };
}

function parseMcpToolset(o: Record<string, unknown>, path: string): McpToolset {
  readObject(o, path, ['type', 'mcp_server_name', 'default_config', 'configs']);
  const default_config = parseDefaultConfig(o.default_config, `${path}.default_config`);
  const configs: McpToolConfig[] = [];
  if (o.configs !== undefined && o.configs !== null) {
    const seen = new Set<string>();
    readArray(o.configs, `${path}.configs`, { max: AGENT_LIMITS.tools }).forEach((c, i) => {
      const p = `${path}.configs[${i}]`;
      const co = readObject(c, p, ['name', 'enabled', 'permission_policy']);
      const name = readString(co.name, `${p}.name`, { min: 1, max: AGENT_LIMITS.toolName });
      if (seen.has(name)) throw invalidRequest(`${path}.configs: tool "${name}" is configured twice`);
      seen.add(name);
      configs.push({
        name,
        enabled:
          co.enabled === undefined || co.enabled === null
            ? default_config.enabled
            : readBoolean(co.enabled, `${p}.enabled`),
        permission_policy:
          co.permission_policy === undefined || co.permission_policy === null
            ? default_config.permission_policy
            : parsePolicy(co.permission_policy, `${p}.permission_policy`),
      });
    });
  }
  return {
    type: 'mcp_toolset',
    mcp_server_name: readString(o.mcp_server_name, `${path}.mcp_server_name`, {
      min: 1,
      max: AGENT_LIMITS.mcpServerName,
    }),
    default_config,
    configs,
  };
}

function parseCustomTool(o: Record<string, unknown>, path: string): CustomTool {
  readObject(o, path, ['type', 'name', 'description', 'input_schema']);
  const name = readString(o.name, `${path}.name`, { min: 1, max: AGENT_LIMITS.toolName });
  if (!CUSTOM_TOOL_NAME.test(name))
    throw invalidRequest(`${path}.name may contain only letters, digits, "_" and "-"`);
  const schema = readObject(o.input_schema, `${path}.input_schema`);
  if (schema.type !== 'object') throw invalidRequest(`${path}.input_schema.type must be "object"`);
  if (schema.properties !== undefined && schema.properties !== null && !isObject(schema.properties)) {
    throw invalidRequest(`${path}.input_schema.properties must be an object`);
  }
  if (schema.required !== undefined && schema.required !== null) {
    readArray(schema.required, `${path}.input_schema.required`).forEach((r, i) =>
      readString(r, `${path}.input_schema.required[${i}]`),
    );
  }
  return {
    type: 'custom',
    name,
    description: readString(o.description, `${path}.description`, {
      min: 1,
      max: AGENT_LIMITS.customToolDescription,
    }),
    input_schema: schema,
  };
}

/** Number of tools a toolset entry exposes, for the 128-tool limit. */
function toolCount(tool: AgentTool): number {
  switch (tool.type) {
    case AGENT_TOOLSET_TYPE:
      return BUILTIN_TOOL_NAMES.length;
    case 'mcp_toolset':
      return Math.max(1, tool.configs.length);
    case 'custom':
      return 1;
  }
}

export function parseTools(v: unknown): AgentTool[] {
  if (v === undefined || v === null) return [];
  const tools = readArray(v, 'tools', { max: AGENT_LIMITS.tools }).map((t, i): AgentTool => {
    const path = `tools[${i}]`;
    const o = readObject(t, path);
    const type = readEnum(o.type, `${path}.type`, [AGENT_TOOLSET_TYPE, 'mcp_toolset', 'custom'] as const);
    switch (type) {
      case AGENT_TOOLSET_TYPE:
        return parseAgentToolset(o, path);
      case 'mcp_toolset':
        return parseMcpToolset(o, path);
      case 'custom':
        return parseCustomTool(o, path);
    }
  });
  if (tools.filter((t) => t.type === AGENT_TOOLSET_TYPE).length > 1) {
    throw invalidRequest(`tools: at most one ${AGENT_TOOLSET_TYPE} toolset`);
  }
  const mcpNames = tools
    .filter((t): t is McpToolset => t.type === 'mcp_toolset')
    .map((t) => t.mcp_server_name);
  const dupMcp = mcpNames.find((n, i) => mcpNames.indexOf(n) !== i);
  if (dupMcp) throw invalidRequest(`tools: more than one mcp_toolset for server "${dupMcp}"`);
  const customNames = tools.filter((t): t is CustomTool => t.type === 'custom').map((t) => t.name);
  for (const [i, n] of customNames.entries()) {
    if (customNames.indexOf(n) !== i) throw invalidRequest(`tools: custom tool name "${n}" is used twice`);
    if ((BUILTIN_TOOL_NAMES as readonly string[]).includes(n))
      throw invalidRequest(`tools: custom tool name "${n}" is reserved`);
  }
  const total = tools.reduce((sum, t) => sum + toolCount(t), 0);
  if (total > AGENT_LIMITS.tools)
    throw invalidRequest(`tools: at most ${AGENT_LIMITS.tools} tools across all toolsets (got ${total})`);
  return tools;
}

// ---------------------------------------------------------------------------------------------------
// MCP servers, Skills, multiagent

export function parseMcpServers(v: unknown): McpServer[] {
  if (v === undefined || v === null) return [];
  const servers = readArray(v, 'mcp_servers', { max: AGENT_LIMITS.mcpServers }).map((s, i): McpServer => {
    const path = `mcp_servers[${i}]`;
    const o = readObject(s, path, ['type', 'name', 'url']);
    readEnum(o.type, `${path}.type`, ['url'] as const);
    const url = readString(o.url, `${path}.url`, { min: 1, max: 2048 });
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidRequest(`${path}.url must be an absolute http(s) URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw invalidRequest(`${path}.url must be an absolute http(s) URL`);
    return {
      type: 'url',
      name: readString(o.name, `${path}.name`, { min: 1, max: AGENT_LIMITS.mcpServerName }),
      url,
    };
  });
  const names = servers.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw invalidRequest(`mcp_servers: name "${dup}" is used twice`);
  return servers;
}

export function parseSkills(v: unknown): SkillPin[] {
  if (v === undefined || v === null) return [];
  const skills = readArray(v, 'skills', { max: AGENT_LIMITS.skills }).map((s, i): SkillPin => {
    const path = `skills[${i}]`;
    const o = readObject(s, path, ['type', 'skill_id', 'version']);
    if (o.type === 'anthropic') throw invalidRequest(`${path}: Mango supports custom Skills only`);
    readEnum(o.type, `${path}.type`, ['custom'] as const);
    const skill_id = readString(o.skill_id, `${path}.skill_id`);
    if (!SKILL_ID.test(skill_id)) throw invalidRequest(`${path}.skill_id must be a skill_ id`);
    const version = readOptionalString(o.version, `${path}.version`, {
      min: 1,
      max: 64,
      pattern: /^(latest|[1-9][0-9]*)$/,
    });
    return { type: 'custom', skill_id, version: version ?? 'latest' };
  });
  const ids = skills.map((s) => s.skill_id);
  const dup = ids.find((n, i) => ids.indexOf(n) !== i);
  if (dup) throw invalidRequest(`skills: ${dup} is pinned twice`);
  return skills;
}

export function parseMultiagent(v: unknown): AgentDraft['multiagent'] {
  if (v === undefined || v === null) return null;
  const o = readObject(v, 'multiagent', ['type', 'agents']);
  readEnum(o.type, 'multiagent.type', ['coordinator'] as const);
  const entries = readArray(o.agents, 'multiagent.agents', {
    min: AGENT_LIMITS.rosterMin,
    max: AGENT_LIMITS.rosterMax,
  });
  const agents = entries.map((e, i): RosterDraft => {
    const path = `multiagent.agents[${i}]`;
    if (typeof e === 'string') {
      if (!AGENT_ID.test(e)) throw invalidRequest(`${path} must be an agent_ id`);
      return { type: 'agent', id: e, version: null };
    }
    const eo = readObject(e, path);
    const type = readEnum(eo.type, `${path}.type`, ['agent', 'self', 'advisor'] as const);
    switch (type) {
      case 'agent': {
        readObject(e, path, ['type', 'id', 'version']);
        const id = readString(eo.id, `${path}.id`);
        if (!AGENT_ID.test(id)) throw invalidRequest(`${path}.id must be an agent_ id`);
        const version =
          eo.version === undefined || eo.version === null
            ? null
            : readInteger(eo.version, `${path}.version`, { min: 1, max: PG_INTEGER_MAX });
        return { type: 'agent', id, version };
      }
      case 'self':
        readObject(e, path, ['type']);
        return { type: 'self' };
      case 'advisor':
        readObject(e, path, ['type', 'model']);
        return { type: 'advisor', model: readString(eo.model, `${path}.model`, { min: 1, max: 256 }) };
    }
  });
  if (agents.filter((a) => a.type === 'self').length > 1)
    throw invalidRequest('multiagent.agents: at most one "self" entry');
  if (agents.filter((a) => a.type === 'advisor').length > 1)
    throw invalidRequest('multiagent.agents: at most one advisor');
  const ids = agents
    .filter((a): a is Extract<RosterDraft, { type: 'agent' }> => a.type === 'agent')
    .map((a) => a.id);
  const dup = ids.find((n, i) => ids.indexOf(n) !== i);
  if (dup) throw invalidRequest(`multiagent.agents: ${dup} is listed twice`);
  return { type: 'coordinator', agents };
}

// ---------------------------------------------------------------------------------------------------
// Cross-field rules, create, update

/**
 * The rules that tie an Agent's fields together (every mcp_server has a toolset and back; pinned Skills
 * need the read tool). Agents are checked at create and update, and a Session's Agent with overrides at
 * the Session's create, so no Session runs a definition its Agent would have been refused.
 */
export function checkCrossFieldRules(d: Pick<AgentDraft, 'tools' | 'mcp_servers' | 'skills'>): void {
  const toolsetServers = new Set(
    d.tools.filter((t): t is McpToolset => t.type === 'mcp_toolset').map((t) => t.mcp_server_name),
  );
  for (const s of d.mcp_servers) {
    if (!toolsetServers.has(s.name))
      throw invalidRequest(`mcp_servers: "${s.name}" is not referenced by any mcp_toolset`);
  }
  const serverNames = new Set(d.mcp_servers.map((s) => s.name));
  for (const name of toolsetServers) {
    if (!serverNames.has(name))
      throw invalidRequest(`tools: mcp_toolset references unknown mcp server "${name}"`);
  }
  if (d.skills.length > 0) {
    const toolset = d.tools.find((t): t is AgentToolset => t.type === AGENT_TOOLSET_TYPE);
    const readEnabled = toolset?.configs.find((c) => c.name === 'read')?.enabled ?? false;
    if (!readEnabled)
      throw invalidRequest('skills require the read tool of agent_toolset_20260401 to be enabled');
  }
}

export function parseAgentCreate(body: unknown): AgentDraft {
  const o = readObject(body, 'body', CREATE_FIELDS);
  if (o.name === undefined) throw invalidRequest('name is required');
  if (o.model === undefined || o.model === null) throw invalidRequest('model is required');
  const draft: AgentDraft = {
    name: readString(o.name, 'name', { min: 1, max: AGENT_LIMITS.name }),
    description: readOptionalString(o.description, 'description', { max: AGENT_LIMITS.description }) ?? null,
    system: readOptionalString(o.system, 'system', { max: AGENT_LIMITS.system }) ?? null,
    model: parseModel(o.model),
    tools: parseTools(o.tools),
    mcp_servers: parseMcpServers(o.mcp_servers),
    skills: parseSkills(o.skills),
    multiagent: parseMultiagent(o.multiagent),
    metadata: parseMetadata(o.metadata),
  };
  checkCrossFieldRules(draft);
  return draft;
}

export interface AgentUpdate {
  draft: AgentDraft;
  /** The optimistic-concurrency version the caller expects, if it sent one. */
  expectedVersion: number | undefined;
}

/** Omitted fields are preserved; null clears where clearable; arrays replace; metadata patches. */
export function parseAgentUpdate(current: AgentDefinition, body: unknown): AgentUpdate {
  const o = readObject(body, 'body', UPDATE_FIELDS);
  if (o.name === null) throw invalidRequest('name cannot be cleared');
  if (o.model === null) throw invalidRequest('model cannot be cleared');
  const draft: AgentDraft = {
    name:
      o.name === undefined ? current.name : readString(o.name, 'name', { min: 1, max: AGENT_LIMITS.name }),
    description:
      o.description === undefined
        ? current.description
        : (readOptionalString(o.description, 'description', { max: AGENT_LIMITS.description }) ?? null),
    system:
      o.system === undefined
        ? current.system
        : (readOptionalString(o.system, 'system', { max: AGENT_LIMITS.system }) ?? null),
    model: o.model === undefined ? current.model : parseModel(o.model, current.model),
    tools: o.tools === undefined ? current.tools : parseTools(o.tools),
    mcp_servers: o.mcp_servers === undefined ? current.mcp_servers : parseMcpServers(o.mcp_servers),
    skills: o.skills === undefined ? current.skills : parseSkills(o.skills),
    multiagent: o.multiagent === undefined ? current.multiagent : parseMultiagent(o.multiagent),
    metadata: applyMetadataPatch(current.metadata, o.metadata),
  };
  checkCrossFieldRules(draft);
  const expectedVersion =
    o.version === undefined || o.version === null
      ? undefined
      : readInteger(o.version, 'version', { min: 1, max: PG_INTEGER_MAX });
  return { draft, expectedVersion };
}

/**
 * A running Session's agent change (docs/api-guide.md, Agents): only `tools` and `mcp_servers`, replacing the
 * frozen snapshot's, under the same cross-field rules as an Agent.
 */
export function parseSessionAgentUpdate(
  current: Pick<AgentDefinition, 'tools' | 'mcp_servers' | 'skills'>,
  v: unknown,
): { tools: AgentTool[]; mcp_servers: McpServer[] } {
  const o = readObject(v, 'agent', ['tools', 'mcp_servers']);
  const tools = o.tools === undefined ? current.tools : parseTools(o.tools);
  const mcp_servers = o.mcp_servers === undefined ? current.mcp_servers : parseMcpServers(o.mcp_servers);
  checkCrossFieldRules({ tools, mcp_servers, skills: current.skills });
  return { tools, mcp_servers };
}

/** What a roster reference resolved to, as the use case read it from the database. */
export interface RosterAgentFacts {
  id: string;
  currentVersion: number;
  archived: boolean;
  /** Whether the referenced version has a multiagent roster itself (depth is limited to 1). */
  hasMultiagent: (version: number) => boolean | undefined;
}

export function rosterAgentIds(draft: AgentDraft): string[] {
  return (draft.multiagent?.agents ?? []).flatMap((a) => (a.type === 'agent' ? [a.id] : []));
}

/**
 * Resolves roster references: each must exist in the Workspace, not be archived, have the named
 * version, and have no roster of its own. `selfId` is the Agent being written (it may not list itself).
 */
export function resolveRoster(
  draft: AgentDraft,
  selfId: string | null,
  facts: Map<string, RosterAgentFacts>,
): AgentDefinition {
  if (!draft.multiagent) return { ...draft, multiagent: null };
  const agents = draft.multiagent.agents.map((a, i): RosterEntry => {
    if (a.type !== 'agent') return a;
    const path = `multiagent.agents[${i}]`;
    if (a.id === selfId) throw invalidRequest(`${path}: use {"type":"self"} to reference this agent`);
    const f = facts.get(a.id);
    if (!f) throw invalidRequest(`${path}: agent ${a.id} not found`);
    if (f.archived) throw invalidRequest(`${path}: agent ${a.id} is archived`);
    const version = a.version ?? f.currentVersion;
    const nested = f.hasMultiagent(version);
    if (nested === undefined) throw invalidRequest(`${path}: agent ${a.id} has no version ${version}`);
    if (nested)
      throw invalidRequest(`${path}: agent ${a.id} has its own multiagent roster (depth is limited to 1)`);
    return { type: 'agent', id: a.id, version };
  });
  const multiagent: Multiagent = { type: 'coordinator', agents };
  return { ...draft, multiagent };
}

/** True when an update changes nothing, in which case no new version is written. */
export const sameDefinition = (a: AgentDefinition, b: AgentDefinition): boolean =>
  canonicalJson(a) === canonicalJson(b);

/** Optimistic concurrency: a supplied version must equal the current one, even when nothing changes. */
export function checkExpectedVersion(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) {
    throw conflict(`version ${expected} does not match the agent's current version ${current}`, {
      current_version: current,
    });
  }
}
