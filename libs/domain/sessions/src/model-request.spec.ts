import type { AgentDefinition, AgentToolset, BuiltinToolConfig } from '@mango/domain-agents';
import {
  ACTIVATE_SKILL_TOOL,
  composeModelRequest,
  isActivation,
  MEMORY_PREAMBLE,
  SKILL_LISTING_MAX_CHARS,
  skillListingProblem,
  SKILLS_PREAMBLE,
  WEB_FETCH_BETA,
} from './model-request';
import { activationResult, SKILL_ACTIVATION_MAX_CHARS } from './skill-activation';
import { stepOutcome } from './model-step';
import { openCalls, type LogEvent } from './tool-calls';
import { transcript } from './transcript';

const config = (
  name: BuiltinToolConfig['name'],
  extra: Partial<BuiltinToolConfig> = {},
): BuiltinToolConfig => ({
  name,
  type: name,
  enabled: true,
  permission_policy: { type: 'always_allow' },
  ...extra,
});

const toolset = (configs: BuiltinToolConfig[]): AgentToolset => ({
  type: 'agent_toolset_20260401',
  default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
  configs,
});

const agent = (over: Partial<AgentDefinition> = {}): Pick<AgentDefinition, 'system' | 'tools'> => ({
  system: 'You are terse.',
  tools: [
    toolset([
      config('read'),
      config('web_search', { enabled: false }),
      config('web_fetch', { enabled: false }),
    ]),
  ],
  ...over,
});

const skill = { name: 'pdf-tools', description: 'Fill PDF forms.', path: 'skills/pdf-tools/' };
const store = {
  name: 'User "prefs"',
  mount_path: '/mnt/memory/user-prefs',
  access: 'read_only' as const,
  instructions: 'Check before answering.',
};

describe('composeModelRequest: the system text', () => {
  it.each([
    ['nothing attached: the Agent system alone', agent(), [], [], 'You are terse.'],
    ['no system and nothing attached: none', agent({ system: null }), [], [], undefined],
    [
      'Skills and Memory, each a section after the system',
      agent(),
      [skill],
      [store],
      [
        'You are terse.',
        '# Skills',
        SKILLS_PREAMBLE,
        '<skill name="pdf-tools" path="skills/pdf-tools/">\nFill PDF forms.\n</skill>',
        '# Memory',
        MEMORY_PREAMBLE,
        '<memory_store name="User &quot;prefs&quot;" path="/mnt/memory/user-prefs" access="read_only">\nCheck before answering.\n</memory_store>',
      ].join('\n\n'),
    ],
    [
      'a Store without instructions, no Agent system',
      agent({ system: null }),
      [],
      [{ ...store, access: 'read_write' as const, instructions: null }],
      [
        '# Memory',
        MEMORY_PREAMBLE,
        '<memory_store name="User &quot;prefs&quot;" path="/mnt/memory/user-prefs" access="read_write">\n</memory_store>',
      ].join('\n\n'),
    ],
  ])('%s', (_label, a, skills, memoryStores, system) => {
    expect(composeModelRequest({ agent: a, skills, memoryStores, mcpTools: [] }).system).toEqual(system);
  });

  it('states the activation tool in the Skills preamble', () => {
    expect(SKILLS_PREAMBLE).toContain(ACTIVATE_SKILL_TOOL);
  });
});

describe('composeModelRequest: the tools', () => {
  const custom = {
    type: 'custom' as const,
    name: 'lookup',
    description: 'Find',
    input_schema: { type: 'object' },
  };
  const mcp = { name: 'mcp__docs__search', description: 'Search docs', input_schema: { type: 'object' } };

  it('sandbox, activate_skill, custom, MCP, then the web server tools with their configuration', () => {
    const a = agent({
      tools: [
        toolset([
          config('read'),
          config('web_search', {
            allowed_domains: ['example.com'],
            user_location: { type: 'approximate', city: 'Paris', country: 'FR' },
          }),
          config('web_fetch', { blocked_domains: ['evil.test'], max_content_tokens: 5000 }),
        ]),
        custom,
      ],
    });
    const out = composeModelRequest({ agent: a, skills: [skill], memoryStores: [], mcpTools: [mcp] });
    expect(out.tools.map((t) => t.name)).toEqual([
      'read',
      'activate_skill',
      'lookup',
      'mcp__docs__search',
      'web_search',
      'web_fetch',
    ]);
    expect(out.tools[1]).toMatchObject({
      input_schema: { properties: { name: { type: 'string', enum: ['pdf-tools'] } }, required: ['name'] },
    });
    expect(out.tools.slice(4)).toEqual([
      {
        type: 'web_search_20250305',
        name: 'web_search',
        allowed_domains: ['example.com'],
        user_location: { type: 'approximate', city: 'Paris', country: 'FR' },
      },
      {
        type: 'web_fetch_20250910',
        name: 'web_fetch',
        blocked_domains: ['evil.test'],
        max_content_tokens: 5000,
      },
    ]);
    expect(out.betas).toEqual([WEB_FETCH_BETA]);
  });

  it.each([
    ['disabled web tools are not declared', config('web_search', { enabled: false }), []],
    ['web tools need always_allow', config('web_search', { permission_policy: { type: 'always_ask' } }), []],
    ['web_search alone needs no beta', config('web_search'), ['web_search']],
  ])('%s', (_label, web, names) => {
    const out = composeModelRequest({
      agent: agent({ tools: [toolset([web])] }),
      skills: [],
      memoryStores: [],
      mcpTools: [],
    });
    expect(out.tools.map((t) => t.name)).toEqual(names);
    expect(out.betas).toEqual([]);
  });

  it('no Skills, no activation tool; a custom tool named activate_skill keeps its name', () => {
    expect(
      composeModelRequest({ agent: agent(), skills: [], memoryStores: [], mcpTools: [] }).tools.map(
        (t) => t.name,
      ),
    ).toEqual(['read']);
    const own = { ...custom, name: ACTIVATE_SKILL_TOOL };
    const a = agent({ tools: [own] });
    const out = composeModelRequest({ agent: a, skills: [skill], memoryStores: [], mcpTools: [] });
    expect(out.tools).toEqual([
      { name: 'activate_skill', description: 'Find', input_schema: { type: 'object' } },
    ]);
    expect(isActivation('activate_skill', a, true)).toBe(false);
    expect(isActivation('activate_skill', agent(), true)).toBe(true);
    expect(isActivation('activate_skill', agent(), false)).toBe(false);
  });
});

describe('skillListingProblem', () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      name: `s-${i}`,
      description: 'x'.repeat(1000),
      path: `skills/s-${i}/`,
    }));

  it.each([
    ['no Skills', 0, false],
    ['15 Skills with long descriptions fit', 15, false],
    ['20 Skills with 1000-character descriptions do not', 20, true],
  ])('%s', (_label, n, refused) => {
    const problem = skillListingProblem(many(n));
    expect(problem !== undefined).toBe(refused);
    if (refused) expect(problem).toContain(`at most ${SKILL_LISTING_MAX_CHARS}`);
  });
});

describe('activationResult', () => {
  const target = {
    name: 'pdf-tools',
    skillPath: 'skills/pdf-tools/',
    allPaths: ['SKILL.md', 'forms.md', 'scripts/fill.py', 'logo.png'],
    texts: [
      { path: 'SKILL.md', content: 'Read forms.md, then run scripts/fill.py.' },
      { path: 'forms.md', content: 'Form rules.' },
      { path: 'scripts/fill.py', content: 'print(1)' },
    ],
  };

  it.each([
    [
      'SKILL.md and the text files it references',
      { name: 'pdf-tools' },
      false,
      '<skill name="pdf-tools" path="skills/pdf-tools/">\n<file path="SKILL.md">\nRead forms.md, then run scripts/fill.py.\n</file>\n<file path="forms.md">\nForm rules.\n</file>\n<file path="scripts/fill.py">\nprint(1)\n</file>\n</skill>\nOther files of this Skill (under skills/pdf-tools/; text files load with activate_skill and path): logo.png',
    ],
    [
      'one file by path',
      { name: 'pdf-tools', path: './forms.md' },
      false,
      '<file path="forms.md">\nForm rules.\n</file>',
    ],
    [
      'a binary file',
      { name: 'pdf-tools', path: 'logo.png' },
      true,
      expect.stringContaining('use it from skills/pdf-tools/logo.png'),
    ],
    [
      'an unknown file',
      { name: 'pdf-tools', path: 'nope.md' },
      true,
      'The Skill pdf-tools has no file "nope.md".',
    ],
    ['an unknown Skill', { name: 'other' }, true, 'Unknown Skill "other". Available: pdf-tools.'],
  ])('%s', (_label, input, isError, text) => {
    expect(activationResult(input, [target])).toEqual({ isError, text });
  });

  it('a version without a kept copy points at the worker copy; the size is bounded', () => {
    expect(activationResult({ name: 'pdf-tools' }, [{ ...target, texts: [] }])).toEqual({
      isError: true,
      text: expect.stringContaining('read skills/pdf-tools/SKILL.md with the read tool'),
    });
    const big = {
      ...target,
      texts: [{ path: 'SKILL.md', content: 'y'.repeat(SKILL_ACTIVATION_MAX_CHARS * 2) }],
    };
    const out = activationResult({ name: 'pdf-tools' }, [big]);
    expect(out.text.length).toBeLessThan(SKILL_ACTIVATION_MAX_CHARS + 1000);
    expect(out.text).toContain('[truncated: read the rest from skills/pdf-tools/SKILL.md]');
  });
});

describe('the transcript and the call states with platform-answered calls', () => {
  let seq = 0;
  const ev = (type: string, body: Record<string, unknown>): LogEvent => ({
    id: `sevt_${++seq}`,
    seq,
    type,
    body,
  });
  const user = ev('user.message', { content: [{ type: 'text', text: 'find it' }] });

  it('a web search the endpoint ran goes back as its own blocks, and waits for nothing', () => {
    const block = {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: [{ type: 'web_search_result', url: 'https://a.test' }],
    };
    const use = ev('agent.tool_use', {
      name: 'web_search',
      input: { query: 'q' },
      evaluated_permission: 'allow',
      _server_tool_use_id: 'srvtoolu_1',
    });
    const result = ev('agent.tool_result', {
      tool_use_id: use.id,
      content: [{ type: 'text', text: 'https://a.test' }],
      is_error: false,
      _server_block: block,
    });
    const reply = ev('agent.message', { content: [{ type: 'text', text: 'found' }] });
    const events = [user, use, result, reply];
    expect(openCalls(events)).toBeUndefined();
    expect(transcript(events)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'find it' }] },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
          block,
          { type: 'text', text: 'found' },
        ],
      },
    ]);
  });

  it('a Skill activation is answered in the step: a tool_result, no worker run, another model step', () => {
    const use = ev('agent.tool_use', {
      name: 'activate_skill',
      input: { name: 'pdf-tools' },
      evaluated_permission: 'allow',
      _answered: true,
    });
    const result = ev('agent.tool_result', {
      tool_use_id: use.id,
      content: [{ type: 'text', text: 'SKILL' }],
      is_error: false,
    });
    expect(stepOutcome([use])).toEqual({ stopReason: 'tool_use', toolUseIds: [] });
    expect(openCalls([user, use, result])).toBeUndefined();
    expect(transcript([user, use, result]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: use.id, name: 'activate_skill', input: { name: 'pdf-tools' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: use.id,
            content: [{ type: 'text', text: 'SKILL' }],
            is_error: false,
          },
        ],
      },
    ]);
  });
});
