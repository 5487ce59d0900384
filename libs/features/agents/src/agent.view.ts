import type { AgentDefinition } from '@mango/domain-agents';
import type { AgentEntity, AgentVersionEntity } from '@mango/persistence';

/** The wire form of one Agent version (openapi.yaml `Agent`). */
export function renderAgent(agent: AgentEntity, version: AgentVersionEntity) {
  const d: AgentDefinition = version.definition;
  return {
    id: agent.id,
    type: 'agent' as const,
    name: d.name,
    description: d.description,
    system: d.system,
    model: d.model,
    tools: d.tools,
    mcp_servers: d.mcp_servers,
    skills: d.skills,
    multiagent: d.multiagent,
    metadata: d.metadata,
    version: version.version,
    created_at: agent.createdAt.toISOString(),
    updated_at: version.createdAt.toISOString(),
    archived_at: agent.archivedAt ? agent.archivedAt.toISOString() : null,
  };
}

export type AgentView = ReturnType<typeof renderAgent>;
