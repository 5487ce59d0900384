import type { AgentEntity, AgentVersionEntity } from '@mango/persistence';
import { renderAgent } from './agent.view';

describe('renderAgent', () => {
  it('takes identity and lifecycle from the agent, definition and updated_at from the version', () => {
    const agent = {
      id: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      workspaceId: 'wrkspc_default',
      currentVersion: 3,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-01-03T00:00:00Z'),
      archivedAt: new Date('2026-01-04T00:00:00Z'),
    } as AgentEntity;
    const version = {
      agentId: agent.id,
      version: 2,
      createdAt: new Date('2026-01-02T00:00:00Z'),
      definition: {
        name: 'n',
        description: null,
        system: 's',
        model: { id: 'm' },
        tools: [],
        mcp_servers: [],
        skills: [],
        multiagent: null,
        metadata: {},
      },
    } as AgentVersionEntity;
    const view = renderAgent(agent, version);
    expect(view).toMatchObject({
      version: 2,
      system: 's',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      archived_at: '2026-01-04T00:00:00.000Z',
    });
    expect(Object.keys(view)).toEqual([
      'id',
      'type',
      'name',
      'description',
      'system',
      'model',
      'tools',
      'mcp_servers',
      'skills',
      'multiagent',
      'metadata',
      'version',
      'created_at',
      'updated_at',
      'archived_at',
    ]);
  });
});
