import type {
  AgentDefinition,
  EvaluatedPermission,
  McpToolset,
  PermissionPolicy,
} from '@mango/domain-agents';

/** A tool as an MCP server lists it (`tools/list`). */
export interface ListedMcpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A tool declared to the model, and where it goes. */
export interface DeclaredMcpTool {
  /** The name the model sees and calls: `mcp__<server>__<tool>`. */
  modelName: string;
  serverName: string;
  toolName: string;
  description: string;
  input_schema: Record<string, unknown>;
  permission: EvaluatedPermission;
  /** The policy is `auto`: `permission` is `ask` until the judgement (docs/api-guide.md "The auto permission policy"). */
  auto?: true;
}

export const MCP_MODEL_NAME_PREFIX = 'mcp__';
const MODEL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** The model-facing name of an MCP tool (`mcp__<server>__<tool>`), or null when it is not a valid tool name. */
export function mcpModelToolName(serverName: string, toolName: string): string | null {
  const name = `${MCP_MODEL_NAME_PREFIX}${serverName}__${toolName}`;
  return MODEL_NAME.test(name) ? name : null;
}

export function mcpToolsetOf(
  definition: Pick<AgentDefinition, 'tools'>,
  serverName: string,
): McpToolset | undefined {
  return definition.tools.find(
    (t): t is McpToolset => t.type === 'mcp_toolset' && t.mcp_server_name === serverName,
  );
}

function policyPermission(policy: PermissionPolicy | undefined): EvaluatedPermission {
  switch (policy?.type) {
    case 'always_allow':
      return 'allow';
    case 'deny':
      return 'deny';
    default:
      // always_ask, auto (until judged), and anything unknown: fail closed to ask (docs/api-guide.md, Remote MCP).
      return 'ask';
  }
}

/**
 * The permission of one MCP tool under its toolset: the tool's own config when listed, else
 * `default_config`. Null when the tool is disabled (it is not declared to the model at all).
 */
export function mcpToolPermission(toolset: McpToolset, toolName: string): EvaluatedPermission | null {
  const config = toolset.configs.find((c) => c.name === toolName);
  const enabled = config ? config.enabled : toolset.default_config.enabled;
  if (!enabled) return null;
  return policyPermission(config ? config.permission_policy : toolset.default_config.permission_policy);
}

/**
 * The tools of one server the model gets: listed by the server, enabled by the toolset, with a valid and
 * unique model name (a tool whose name cannot be a model tool name is left out). Sorted by name so the
 * declaration is stable across listings.
 */
export function declareMcpTools(
  definition: Pick<AgentDefinition, 'tools'>,
  serverName: string,
  listed: ListedMcpTool[],
): DeclaredMcpTool[] {
  const toolset = mcpToolsetOf(definition, serverName);
  if (!toolset) return [];
  const seen = new Set<string>();
  const out: DeclaredMcpTool[] = [];
  for (const tool of [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const permission = mcpToolPermission(toolset, tool.name);
    const modelName = mcpModelToolName(serverName, tool.name);
    if (permission === null || modelName === null || seen.has(modelName)) continue;
    seen.add(modelName);
    const config = toolset.configs.find((c) => c.name === tool.name);
    const auto =
      (config ? config.permission_policy : toolset.default_config.permission_policy).type === 'auto';
    out.push({
      modelName,
      serverName,
      toolName: tool.name,
      description: (tool.description ?? '').slice(0, 4096),
      input_schema: { type: 'object', ...(tool.inputSchema ?? {}) },
      permission,
      ...(auto ? { auto: true as const } : {}),
    });
  }
  return out;
}
