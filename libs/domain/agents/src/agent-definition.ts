/** The stored, resolved form of an Agent version: exactly what GET returns (besides lifecycle fields). */
/** `auto`: a bounded model request judges each call, allow or ask (docs/api-guide.md "The auto permission policy"). */
export type PermissionPolicy =
  { type: 'always_allow' } | { type: 'always_ask' } | { type: 'deny' } | { type: 'auto' };
export const PERMISSION_POLICY_TYPES = ['always_allow', 'always_ask', 'deny', 'auto'] as const;

export const SANDBOX_TOOL_NAMES = ['bash', 'read', 'write', 'edit', 'glob', 'grep'] as const;
export const WEB_TOOL_NAMES = ['web_fetch', 'web_search'] as const;
export const BUILTIN_TOOL_NAMES = [...SANDBOX_TOOL_NAMES, ...WEB_TOOL_NAMES] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];
export const AGENT_TOOLSET_TYPE = 'agent_toolset_20260401';

export const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type EffortLevel = (typeof EFFORT_LEVELS)[number];

export interface ModelConfig {
  id: string;
  effort?: { type: EffortLevel };
  inference_geo?: string;
  speed?: 'standard' | 'fast';
}

export interface ToolsetDefaultConfig {
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

export interface BuiltinToolConfig {
  name: BuiltinToolName;
  type: BuiltinToolName;
  enabled: boolean;
  permission_policy: PermissionPolicy;
  /** web_fetch / web_search only */
  allowed_domains?: string[];
  blocked_domains?: string[];
  max_content_tokens?: number | null;
  user_location?: Record<string, string | null> | null;
}

export interface AgentToolset {
  type: typeof AGENT_TOOLSET_TYPE;
  default_config: ToolsetDefaultConfig;
  configs: BuiltinToolConfig[];
}

export interface McpToolConfig {
  name: string;
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

export interface McpToolset {
  type: 'mcp_toolset';
  mcp_server_name: string;
  default_config: ToolsetDefaultConfig;
  configs: McpToolConfig[];
}

export interface CustomTool {
  type: 'custom';
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export type AgentTool = AgentToolset | McpToolset | CustomTool;

export interface McpServer {
  type: 'url';
  name: string;
  url: string;
}

export interface SkillPin {
  type: 'custom';
  skill_id: string;
  version: string;
}

export type RosterEntry =
  { type: 'agent'; id: string; version: number } | { type: 'self' } | { type: 'advisor'; model: string };

export interface Multiagent {
  type: 'coordinator';
  agents: RosterEntry[];
}

export interface AgentDefinition {
  name: string;
  description: string | null;
  system: string | null;
  model: ModelConfig;
  tools: AgentTool[];
  mcp_servers: McpServer[];
  skills: SkillPin[];
  multiagent: Multiagent | null;
  metadata: Record<string, string>;
}

export const AGENT_LIMITS = {
  name: 256,
  description: 2048,
  system: 100_000,
  tools: 128,
  skills: 20,
  mcpServers: 20,
  mcpServerName: 255,
  toolName: 128,
  customToolDescription: 10_000,
  rosterMin: 1,
  rosterMax: 20,
  domains: 64,
} as const;
