import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { AgentDefinition } from './agent-definition';
import {
  checkExpectedVersion,
  parseSessionAgentUpdate,
  parseAgentCreate,
  parseAgentUpdate,
  resolveRoster,
  RosterAgentFacts,
  sameDefinition,
} from './parse-agent';

const AGENT_A = 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const AGENT_B = 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AC';
const SKILL = 'skill_01JD2Y3QX9V5M8K7R6T4W2P0AB';

function rejects(fn: () => unknown, message: RegExp, code = ErrorCode.InvalidRequest) {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(DomainError);
  expect((caught as DomainError).code).toBe(code);
  expect((caught as DomainError).message).toMatch(message);
}

const finalize = (body: unknown): AgentDefinition => resolveRoster(parseAgentCreate(body), null, new Map());

describe('agent create', () => {
  it('resolves a minimal agent: model object form, empty arrays, null roster', () => {
    expect(finalize({ name: 'coder', model: 'claude-sonnet-4-6' })).toEqual({
      name: 'coder',
      description: null,
      system: null,
      model: { id: 'claude-sonnet-4-6' },
      tools: [],
      mcp_servers: [],
      skills: [],
      multiagent: null,
      metadata: {},
    });
  });

  it('resolves the toolset: defaults fill every key of each config', () => {
    const def = finalize({
      name: 'a',
      model: { id: 'm', effort: 'high' },
      tools: [
        {
          type: 'agent_toolset_20260401',
          default_config: { permission_policy: { type: 'always_ask' } },
          configs: [
            { name: 'bash', permission_policy: { type: 'deny' } },
            { name: 'read' },
            { name: 'web_search', permission_policy: { type: 'always_allow' } },
            { name: 'web_fetch', enabled: false },
          ],
        },
      ],
    });
    expect(def.model).toEqual({ id: 'm', effort: { type: 'high' } });
    expect(def.tools[0]).toEqual({
      type: 'agent_toolset_20260401',
      default_config: { enabled: true, permission_policy: { type: 'always_ask' } },
      configs: [
        { name: 'bash', type: 'bash', enabled: true, permission_policy: { type: 'deny' } },
        { name: 'read', type: 'read', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'write', type: 'write', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'edit', type: 'edit', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'glob', type: 'glob', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'grep', type: 'grep', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'web_fetch', type: 'web_fetch', enabled: false, permission_policy: { type: 'always_ask' } },
        {
          name: 'web_search',
          type: 'web_search',
          enabled: true,
          permission_policy: { type: 'always_allow' },
        },
      ],
    });
  });

  it('accepts custom tools, MCP servers referenced by toolsets, skills with read enabled', () => {
    const def = finalize({
      name: 'a',
      model: 'm',
      tools: [
        { type: 'agent_toolset_20260401' },
        { type: 'mcp_toolset', mcp_server_name: 'docs' },
        {
          type: 'custom',
          name: 'lookup_order',
          description: 'Find an order',
          input_schema: { type: 'object', properties: {} },
        },
      ],
      mcp_servers: [{ type: 'url', name: 'docs', url: 'https://mcp.example.com/sse' }],
      skills: [{ type: 'custom', skill_id: SKILL }],
    });
    expect(def.skills).toEqual([{ type: 'custom', skill_id: SKILL, version: 'latest' }]);
    expect(def.tools).toHaveLength(3);
  });

  it.each<[string, unknown, RegExp]>([
    ['a missing name', { model: 'm' }, /name is required/],
    ['an empty name', { name: '', model: 'm' }, /name must not be empty/],
    ['a 257-char name', { name: 'x'.repeat(257), model: 'm' }, /at most 256/],
    ['a missing model', { name: 'a' }, /model is required/],
    ['an unknown field', { name: 'a', model: 'm', colour: 'red' }, /body.colour: unknown field/],
    [
      'a 2049-char description',
      { name: 'a', model: 'm', description: 'x'.repeat(2049) },
      /description must have at most 2048/,
    ],
    [
      'a 100001-char system prompt',
      { name: 'a', model: 'm', system: 'x'.repeat(100_001) },
      /system must have at most 100000/,
    ],
    [
      'an unknown effort',
      { name: 'a', model: { id: 'm', effort: 'extreme' } },
      /model.effort must be one of/,
    ],
    [
      'an unknown tool type',
      { name: 'a', model: 'm', tools: [{ type: 'shell' }] },
      /tools\[0\].type must be one of/,
    ],
    [
      'an unknown builtin tool',
      { name: 'a', model: 'm', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'rm' }] }] },
      /name must be one of/,
    ],
    [
      'an unknown permission policy',
      {
        name: 'a',
        model: 'm',
        tools: [
          { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'sometimes' } } },
        ],
      },
      /permission_policy.type must be one of/,
    ],
    [
      'web_search without always_allow',
      {
        name: 'a',
        model: 'm',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'web_search', permission_policy: { type: 'always_ask' } }],
          },
        ],
      },
      /web_search runs at the model endpoint and requires permission_policy always_allow/,
    ],
    [
      'a default always_ask that leaves web tools implicitly enabled',
      {
        name: 'a',
        model: 'm',
        tools: [
          { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } },
        ],
      },
      /web_fetch runs at the model endpoint/,
    ],
    [
      'two toolsets',
      {
        name: 'a',
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'agent_toolset_20260401' }],
      },
      /at most one/,
    ],
    [
      'a bad custom tool name',
      {
        name: 'a',
        model: 'm',
        tools: [{ type: 'custom', name: 'no spaces', description: 'd', input_schema: { type: 'object' } }],
      },
      /only letters/,
    ],
    [
      'a custom tool shadowing bash',
      {
        name: 'a',
        model: 'm',
        tools: [{ type: 'custom', name: 'bash', description: 'd', input_schema: { type: 'object' } }],
      },
      /reserved/,
    ],
    [
      'a non-object input schema',
      {
        name: 'a',
        model: 'm',
        tools: [{ type: 'custom', name: 't', description: 'd', input_schema: { type: 'string' } }],
      },
      /input_schema.type must be "object"/,
    ],
    [
      'an unreferenced MCP server',
      { name: 'a', model: 'm', mcp_servers: [{ type: 'url', name: 'x', url: 'https://x.example' }] },
      /not referenced by any mcp_toolset/,
    ],
    [
      'a toolset for an unknown MCP server',
      { name: 'a', model: 'm', tools: [{ type: 'mcp_toolset', mcp_server_name: 'x' }] },
      /unknown mcp server "x"/,
    ],
    [
      'a non-http MCP url',
      { name: 'a', model: 'm', mcp_servers: [{ type: 'url', name: 'x', url: 'file:///etc/passwd' }] },
      /absolute http\(s\) URL/,
    ],
    [
      'skills without the read tool',
      { name: 'a', model: 'm', skills: [{ type: 'custom', skill_id: SKILL }] },
      /skills require the read tool/,
    ],
    [
      'an anthropic skill',
      { name: 'a', model: 'm', skills: [{ type: 'anthropic', skill_id: 'xlsx' }] },
      /custom Skills only/,
    ],
    [
      '21 skills',
      {
        name: 'a',
        model: 'm',
        skills: Array.from({ length: 21 }, () => ({ type: 'custom', skill_id: SKILL })),
      },
      /at most 20/,
    ],
    [
      'a roster with two advisors',
      {
        name: 'a',
        model: 'm',
        multiagent: {
          type: 'coordinator',
          agents: [
            { type: 'advisor', model: 'x' },
            { type: 'advisor', model: 'y' },
          ],
        },
      },
      /at most one advisor/,
    ],
    [
      'an empty roster',
      { name: 'a', model: 'm', multiagent: { type: 'coordinator', agents: [] } },
      /at least 1/,
    ],
    [
      'a roster listing one agent twice',
      {
        name: 'a',
        model: 'm',
        multiagent: { type: 'coordinator', agents: [AGENT_A, { type: 'agent', id: AGENT_A }] },
      },
      /listed twice/,
    ],
    [
      'a roster entry with a wrong prefix',
      {
        name: 'a',
        model: 'm',
        multiagent: { type: 'coordinator', agents: ['env_01JD2Y3QX9V5M8K7R6T4W2P0AB'] },
      },
      /must be an agent_ id/,
    ],
    [
      '17 metadata keys',
      {
        name: 'a',
        model: 'm',
        metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
      },
      /at most 16 keys/,
    ],
    ['a body that is not an object', ['name'], /body must be an object/],
  ])('rejects %s', (_label, body, message) => {
    rejects(() => parseAgentCreate(body), message);
  });

  it('counts toolset tools towards the 128-tool limit', () => {
    const custom = Array.from({ length: 121 }, (_, i) => ({
      type: 'custom',
      name: `t${i}`,
      description: 'd',
      input_schema: { type: 'object' },
    }));
    rejects(
      () =>
        parseAgentCreate({ name: 'a', model: 'm', tools: [{ type: 'agent_toolset_20260401' }, ...custom] }),
      /at most 128 tools/,
    );
    expect(
      parseAgentCreate({
        name: 'a',
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }, ...custom.slice(0, 120)],
      }).tools,
    ).toHaveLength(121);
  });
});

describe('roster resolution', () => {
  const facts = (over: Partial<RosterAgentFacts> & { id: string }): [string, RosterAgentFacts] => [
    over.id,
    { currentVersion: 3, archived: false, hasMultiagent: (v) => (v <= 3 ? false : undefined), ...over },
  ];
  const draft = parseAgentCreate({
    name: 'lead',
    model: 'm',
    multiagent: {
      type: 'coordinator',
      agents: [AGENT_A, { type: 'agent', id: AGENT_B, version: 2 }, { type: 'self' }],
    },
  });

  it('pins unversioned references to the current version', () => {
    const def = resolveRoster(draft, null, new Map([facts({ id: AGENT_A }), facts({ id: AGENT_B })]));
    expect(def.multiagent!.agents).toEqual([
      { type: 'agent', id: AGENT_A, version: 3 },
      { type: 'agent', id: AGENT_B, version: 2 },
      { type: 'self' },
    ]);
  });

  it.each<[string, Map<string, RosterAgentFacts>, string | null, RegExp]>([
    ['a missing agent', new Map([facts({ id: AGENT_A })]), null, /agent_.* not found/],
    [
      'an archived agent',
      new Map([facts({ id: AGENT_A, archived: true }), facts({ id: AGENT_B })]),
      null,
      /is archived/,
    ],
    [
      'a missing version',
      new Map([facts({ id: AGENT_A }), facts({ id: AGENT_B, hasMultiagent: () => undefined })]),
      null,
      /has no version 2/,
    ],
    [
      'a nested coordinator',
      new Map([facts({ id: AGENT_A, hasMultiagent: () => true }), facts({ id: AGENT_B })]),
      null,
      /depth is limited to 1/,
    ],
    [
      'the agent itself by id',
      new Map([facts({ id: AGENT_A }), facts({ id: AGENT_B })]),
      AGENT_A,
      /use \{"type":"self"\}/,
    ],
  ])('rejects %s', (_label, map, selfId, message) => {
    rejects(() => resolveRoster(draft, selfId, map), message);
  });
});

describe('agent update', () => {
  const current = finalize({
    name: 'coder',
    model: { id: 'm1', effort: 'low', inference_geo: 'us' },
    description: 'd',
    system: 's',
    tools: [{ type: 'agent_toolset_20260401' }],
    metadata: { team: 'a', keep: 'y' },
  });
  const update = (body: unknown) => resolveRoster(parseAgentUpdate(current, body).draft, AGENT_A, new Map());

  it('preserves omitted fields and patches metadata', () => {
    const next = update({ system: 'new', metadata: { team: null, env: 'prod' } });
    expect(next).toEqual({ ...current, system: 'new', metadata: { keep: 'y', env: 'prod' } });
  });

  it('clears description, system and arrays with null', () => {
    const next = update({ description: null, system: null, tools: null });
    expect(next.description).toBeNull();
    expect(next.system).toBeNull();
    expect(next.tools).toEqual([]);
  });

  it('keeps effort for the same model id, resets it for a new one, and clears an omitted inference_geo', () => {
    expect(update({ model: { id: 'm1' } }).model).toEqual({ id: 'm1', effort: { type: 'low' } });
    expect(update({ model: { id: 'm2' } }).model).toEqual({ id: 'm2' });
    expect(update({ model: 'm1' }).model).toEqual({ id: 'm1', effort: { type: 'low' } });
  });

  it.each<[string, unknown, RegExp]>([
    ['clearing name', { name: null }, /name cannot be cleared/],
    ['clearing model', { model: null }, /model cannot be cleared/],
    ['an empty name', { name: '' }, /must not be empty/],
    ['a non-integer version', { version: '2' }, /version must be an integer/],
  ])('rejects %s', (_label, body, message) => {
    rejects(() => parseAgentUpdate(current, body), message);
  });

  it('detects a no-op update so that no version is written', () => {
    expect(sameDefinition(update({ name: 'coder', metadata: { team: 'a' } }), current)).toBe(true);
    expect(sameDefinition(update({ name: 'coder2' }), current)).toBe(false);
  });

  it('a stale expected version is a 409 conflict, even when nothing would change', () => {
    const { expectedVersion } = parseAgentUpdate(current, { version: 1 });
    rejects(
      () => checkExpectedVersion(expectedVersion, 2),
      /does not match the agent's current version 2/,
      ErrorCode.Conflict,
    );
    expect(() => checkExpectedVersion(2, 2)).not.toThrow();
    expect(() => checkExpectedVersion(undefined, 7)).not.toThrow();
  });
});

describe('a Session agent update (tools and mcp_servers only)', () => {
  const current = { tools: [], mcp_servers: [], skills: [] };
  it('replaces tools and keeps what is omitted', () => {
    const next = parseSessionAgentUpdate(current, { tools: [{ type: 'agent_toolset_20260401' }] });
    expect(next.tools).toHaveLength(1);
    expect(next.mcp_servers).toEqual([]);
  });
  it.each([
    ['another field', { system: 'x' }, /unknown field|not allowed|system/],
    [
      'an mcp server nothing references',
      { mcp_servers: [{ type: 'url', name: 'gh', url: 'https://mcp.example.com' }] },
      /not referenced/,
    ],
    ['not an object', 'tools', /agent/],
  ])('refuses %s', (_name, body, message) => {
    expect(() => parseSessionAgentUpdate(current, body)).toThrow(message);
  });
});
