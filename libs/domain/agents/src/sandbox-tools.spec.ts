import { evaluatePermission, enabledSandboxTools } from './sandbox-tools';
import { parseAgentCreate } from './parse-agent';

describe('sandbox tools and permissions', () => {
  const agent = parseAgentCreate({
    name: 'a',
    model: 'm',
    tools: [
      {
        type: 'agent_toolset_20260401',
        configs: [
          { name: 'bash', permission_policy: { type: 'always_ask' } },
          { name: 'write', permission_policy: { type: 'deny' } },
          { name: 'grep', enabled: false },
        ],
      },
    ],
  });

  it('maps policies to evaluated permissions and fails closed for tools the Agent does not enable', () => {
    expect(evaluatePermission(agent, 'read')).toBe('allow');
    expect(evaluatePermission(agent, 'bash')).toBe('ask');
    expect(evaluatePermission(agent, 'write')).toBe('deny');
    expect(evaluatePermission(agent, 'grep')).toBe('deny');
    expect(evaluatePermission(agent, 'rm_rf')).toBe('deny');
  });

  it('offers the model only the enabled sandbox tools, with input schemas', () => {
    expect(enabledSandboxTools(agent).map((t) => t.name)).toEqual(['bash', 'read', 'write', 'edit', 'glob']);
    expect(enabledSandboxTools({ tools: [] })).toEqual([]);
  });
});
