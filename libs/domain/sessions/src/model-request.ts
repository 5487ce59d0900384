import {
  AGENT_TOOLSET_TYPE,
  type AgentDefinition,
  type AgentToolset,
  type BuiltinToolConfig,
  type CustomTool,
  enabledSandboxTools,
} from '@mango/domain-agents';

/**
 * What the model sees of a Session (docs/api-guide.md "What the model sees"): the request's `system`
 * text and `tools`, composed from the frozen Agent, its frozen Skills, the attached Memory Stores, the
 * declared MCP tools and the web tools run by the model endpoint. Pure: the model-step activity loads
 * the inputs and sends the result unchanged. The texts below are documented word for word; change
 * them only together with the docs.
 */

/** A frozen Skill as the prompt lists it: SKILL.md's name and description, and its sandbox path. */
export interface PromptSkill {
  name: string;
  description: string;
  /** Relative to the worker's workdir, with a trailing slash: `skills/<name>/`. */
  path: string;
}

/** An attached Memory Store as the prompt lists it (the Session's `memory_store` resource). */
export interface PromptMemoryStore {
  name: string;
  mount_path: string;
  access: 'read_write' | 'read_only';
  instructions: string | null;
}

/** A frozen Skill as the prompt lists it, with the version it names (for `activate_skill`). */
export interface FrozenSkill extends PromptSkill {
  skillId: string;
  version: number;
}

/**
 * What a Session's model requests show of its frozen Skills and attached Memory Stores (docs/api-guide.md
 * "What the model sees"). Both are fixed when the Session is created — Skill pins are frozen to versions,
 * Memory attachments cannot change — so Session create computes them once and stores them on the
 * Session (`sessions.prompt_inputs`); a model step reads them from the Session row it already holds.
 */
export interface PromptInputs {
  skills: FrozenSkill[];
  memoryStores: PromptMemoryStore[];
}

/** A client tool as the Messages API takes it. */
export interface ClientToolDeclaration {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** A tool the model endpoint runs itself (Messages API server tools). */
// A type alias (not an interface), so that it fits the adapter's `Record<string, unknown>` tool shape.
export type ServerToolDeclaration = {
  type: typeof WEB_SEARCH_TOOL_TYPE | typeof WEB_FETCH_TOOL_TYPE;
  name: 'web_search' | 'web_fetch';
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: Record<string, string | null>;
  max_content_tokens?: number;
};

export type ToolDeclaration = ClientToolDeclaration | ServerToolDeclaration;

export interface ModelRequestInput {
  agent: Pick<AgentDefinition, 'system' | 'tools'>;
  skills: readonly PromptSkill[];
  memoryStores: readonly PromptMemoryStore[];
  /** MCP tools declared for this turn, by their model-facing names (`mcp__<server>__<tool>`). */
  mcpTools: readonly ClientToolDeclaration[];
  /** A coordinator's platform tools (`platformTools`, thread-orchestration.ts), after the custom tools. */
  platformTools?: readonly ClientToolDeclaration[];
}

export interface ComposedModelRequest {
  /** Absent when the Agent has no system prompt and nothing is attached. */
  system?: string;
  tools: ToolDeclaration[];
  /** `anthropic-beta` values the declared tools need. */
  betas: string[];
}

export const WEB_SEARCH_TOOL_TYPE = 'web_search_20250305';
export const WEB_FETCH_TOOL_TYPE = 'web_fetch_20250910';
/** The beta the Messages API needs for the web fetch tool. */
export const WEB_FETCH_BETA = 'web-fetch-2025-09-10';

/** The platform tool that loads a Skill's instructions from Mango's archive. */
export const ACTIVATE_SKILL_TOOL = 'activate_skill';

/** The Skills section may have at most this many characters; a larger Skill set is refused at Session create. */
export const SKILL_LISTING_MAX_CHARS = 16_384;

export const SKILLS_HEADING = '# Skills';
export const SKILLS_PREAMBLE =
  'These Skills are available in the sandbox. Each is a directory of instructions and supporting files at ' +
  'the path shown, relative to the working directory. When a task matches a Skill, call the ' +
  `${ACTIVATE_SKILL_TOOL} tool with its name to load its instructions before you start, then follow them.`;

export const MEMORY_HEADING = '# Memory';
export const MEMORY_PREAMBLE =
  'These Memory Stores are mounted in the sandbox as directories of text files. Files you write in a ' +
  'read_write store persist after this Session; a read_only store cannot be changed. Read what is ' +
  'relevant before you start, and keep what you learn in the store as its instructions say.';

/** XML attribute value: `&`, `<`, `>` and `"` escaped. */
const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The Skills section of the system prompt (empty string when there are no Skills). */
export function skillsSection(skills: readonly PromptSkill[]): string {
  if (skills.length === 0) return '';
  const entries = skills.map(
    (s) => `<skill name="${attr(s.name)}" path="${attr(s.path)}">\n${s.description}\n</skill>`,
  );
  return [SKILLS_HEADING, SKILLS_PREAMBLE, ...entries].join('\n\n');
}

/** The Memory section of the system prompt (empty string when no Store is attached). */
export function memorySection(stores: readonly PromptMemoryStore[]): string {
  if (stores.length === 0) return '';
  const entries = stores.map((m) => {
    const open = `<memory_store name="${attr(m.name)}" path="${attr(m.mount_path)}" access="${m.access}">`;
    return m.instructions ? `${open}\n${m.instructions}\n</memory_store>` : `${open}\n</memory_store>`;
  });
  return [MEMORY_HEADING, MEMORY_PREAMBLE, ...entries].join('\n\n');
}

/**
 * Whether a Skill set's listing fits ({@link SKILL_LISTING_MAX_CHARS}); the reason when it does not
 * (Session create answers 400 with it).
 */
export function skillListingProblem(skills: readonly PromptSkill[]): string | undefined {
  const size = skillsSection(skills).length;
  if (size <= SKILL_LISTING_MAX_CHARS) return undefined;
  return (
    `the Agent's Skills need ${size} characters in the system prompt; at most ${SKILL_LISTING_MAX_CHARS} ` +
    'fit (use fewer Skills or shorter descriptions)'
  );
}

/** The activation tool's declaration for these Skills (their names are the only accepted values). */
export function activateSkillTool(skills: readonly PromptSkill[]): ClientToolDeclaration {
  return {
    name: ACTIVATE_SKILL_TOOL,
    description:
      "Load a Skill's instructions: its SKILL.md and the text files it references, from Mango's archive. " +
      "With path, load one other text file of the Skill (relative to the Skill's directory).",
    input_schema: {
      type: 'object',
      properties: {
        name: { type: 'string', enum: skills.map((s) => s.name) },
        path: { type: 'string' },
      },
      required: ['name'],
    },
  };
}

function webConfig(
  agent: Pick<AgentDefinition, 'tools'>,
  name: 'web_search' | 'web_fetch',
): BuiltinToolConfig | undefined {
  const toolset = agent.tools.find((t): t is AgentToolset => t.type === AGENT_TOOLSET_TYPE);
  const config = toolset?.configs.find((c) => c.name === name);
  // The Agent API requires always_allow for enabled web tools; anything else is not declared.
  return config?.enabled && config.permission_policy.type === 'always_allow' ? config : undefined;
}

/** The enabled web tools as Messages API server tools, with their configuration passed through. */
export function webServerTools(agent: Pick<AgentDefinition, 'tools'>): ServerToolDeclaration[] {
  const out: ServerToolDeclaration[] = [];
  const search = webConfig(agent, 'web_search');
  if (search)
    out.push({
      type: WEB_SEARCH_TOOL_TYPE,
      name: 'web_search',
      ...(search.allowed_domains?.length ? { allowed_domains: search.allowed_domains } : {}),
      ...(search.blocked_domains?.length ? { blocked_domains: search.blocked_domains } : {}),
      ...(search.user_location ? { user_location: search.user_location } : {}),
    });
  const fetch = webConfig(agent, 'web_fetch');
  if (fetch)
    out.push({
      type: WEB_FETCH_TOOL_TYPE,
      name: 'web_fetch',
      ...(fetch.allowed_domains?.length ? { allowed_domains: fetch.allowed_domains } : {}),
      ...(fetch.blocked_domains?.length ? { blocked_domains: fetch.blocked_domains } : {}),
      ...(typeof fetch.max_content_tokens === 'number'
        ? { max_content_tokens: fetch.max_content_tokens }
        : {}),
    });
  return out;
}

/** Whether a tool name the model called is a web tool the endpoint ran (never the worker's). */
export const isWebToolName = (name: string) => name === 'web_search' || name === 'web_fetch';

/**
 * The request's `system` and `tools`. System: the Agent's `system`, then the Skills section, then the
 * Memory section, separated by a blank line. Tools, in this order: the enabled sandbox tools,
 * `activate_skill` (when there are Skills and no custom tool takes the name), custom tools, MCP tools,
 * then the enabled web tools as server tools.
 */
export function composeModelRequest(input: ModelRequestInput): ComposedModelRequest {
  const sections = [
    input.agent.system ?? '',
    skillsSection(input.skills),
    memorySection(input.memoryStores),
  ].filter((s) => s.length > 0);
  const custom = input.agent.tools.filter((t): t is CustomTool => t.type === 'custom');
  const offerActivation = input.skills.length > 0 && !custom.some((t) => t.name === ACTIVATE_SKILL_TOOL);
  const web = webServerTools(input.agent);
  const tools: ToolDeclaration[] = [
    ...enabledSandboxTools(input.agent),
    ...(offerActivation ? [activateSkillTool(input.skills)] : []),
    ...custom.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })),
    ...(input.platformTools ?? []),
    ...input.mcpTools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.input_schema,
    })),
    ...web,
  ];
  return {
    ...(sections.length ? { system: sections.join('\n\n') } : {}),
    tools,
    betas: web.some((t) => t.name === 'web_fetch') ? [WEB_FETCH_BETA] : [],
  };
}

/** Whether the model-step answers this call itself (Skill activation) rather than a worker or client. */
export function isActivation(
  name: string,
  agent: Pick<AgentDefinition, 'tools'>,
  hasSkills: boolean,
): boolean {
  return (
    hasSkills &&
    name === ACTIVATE_SKILL_TOOL &&
    !agent.tools.some((t) => t.type === 'custom' && t.name === ACTIVATE_SKILL_TOOL)
  );
}
