import type { AgentDefinition, AgentToolset, PermissionPolicy } from './agent-definition';
import { AGENT_TOOLSET_TYPE, SANDBOX_TOOL_NAMES } from './agent-definition';

/** Model-facing definitions of the six sandbox tools (agent_toolset_20260401; docs/api-guide.md, Agents). */
export const SANDBOX_TOOL_DEFINITIONS: Record<
  (typeof SANDBOX_TOOL_NAMES)[number],
  { description: string; input_schema: Record<string, unknown> }
> = {
  bash: {
    description:
      'Run a command in a persistent Bash shell in the sandbox. restart:true starts a fresh shell.',
    input_schema: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        restart: { type: 'boolean' },
        timeout_ms: { type: 'integer' },
      },
    },
  },
  read: {
    description: 'Read a UTF-8 text file (up to 64 KiB); view_range is [start_line, end_line], 1-based.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        view_range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
      },
      required: ['file_path'],
    },
  },
  write: {
    description: 'Write a file, creating parent directories.',
    input_schema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
  },
  edit: {
    description: 'Replace old_string with new_string in a file (exactly once unless replace_all).',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        old_string: { type: 'string' },
        new_string: { type: 'string' },
        replace_all: { type: 'boolean' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  glob: {
    description: 'Find files by glob pattern relative to the workspace.',
    input_schema: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
      required: ['pattern'],
    },
  },
  grep: {
    description: 'Search file contents with a regular expression.',
    input_schema: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
      required: ['pattern'],
    },
  },
};

export type EvaluatedPermission = 'allow' | 'ask' | 'deny';

function policyOf(definition: Pick<AgentDefinition, 'tools'>, name: string): PermissionPolicy | undefined {
  const toolset = definition.tools.find((t): t is AgentToolset => t.type === AGENT_TOOLSET_TYPE);
  const config = toolset?.configs.find((c) => c.name === name && c.enabled);
  return config?.permission_policy;
}

/** The sandbox tools an Agent exposes to the model (enabled in its toolset). */
export function enabledSandboxTools(definition: Pick<AgentDefinition, 'tools'>) {
  return SANDBOX_TOOL_NAMES.filter((name) => policyOf(definition, name) !== undefined).map((name) => ({
    name,
    ...SANDBOX_TOOL_DEFINITIONS[name],
  }));
}

/**
 * The permission a call gets from the frozen Agent: always_allow → allow, always_ask → ask, deny → deny,
 * auto → ask until a judgement says otherwise (see {@link isAutoPolicy}). A tool the Agent does not enable
 * (the model invented it) is denied — fail closed.
 */
export function evaluatePermission(
  definition: Pick<AgentDefinition, 'tools'>,
  name: string,
): EvaluatedPermission {
  const policy = policyOf(definition, name);
  if (!policy) return 'deny';
  switch (policy.type) {
    case 'always_allow':
      return 'allow';
    case 'always_ask':
      return 'ask';
    case 'deny':
      return 'deny';
    case 'auto':
      return 'ask';
  }
}

/** Whether the call's policy is `auto` (judged by the model before it runs). */
export function isAutoPolicy(definition: Pick<AgentDefinition, 'tools'>, name: string): boolean {
  return policyOf(definition, name)?.type === 'auto';
}
