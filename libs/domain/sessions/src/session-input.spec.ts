import { parseTools } from '@mango/domain-agents';
import { DomainError } from '@mango/domain-kernel';
import { freezeAgent, parseAgentSelection, parseEventsBody, parseSessionCreate } from './session-input';

const AGENT = 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const ENV = 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB';
const OUTCOME = {
  type: 'user.define_outcome',
  description: 'A haiku',
  rubric: { type: 'text', content: '5-7-5' },
};

describe('session create input', () => {
  it('accepts vault_ids in order (absent or null: none)', () => {
    const ids = ['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AA'];
    expect(parseSessionCreate({ agent: AGENT, environment_id: ENV, vault_ids: ids }).vaultIds).toEqual(ids);
    expect(parseSessionCreate({ agent: AGENT, environment_id: ENV }).vaultIds).toEqual([]);
    expect(parseSessionCreate({ agent: AGENT, environment_id: ENV, vault_ids: null }).vaultIds).toEqual([]);
  });

  it('accepts an agent id, a pinned version and overrides', () => {
    expect(parseSessionCreate({ agent: AGENT, environment_id: ENV }).agent).toEqual({
      id: AGENT,
      version: null,
      overrides: null,
    });
    expect(
      parseSessionCreate({ agent: { type: 'agent', id: AGENT, version: 2 }, environment_id: ENV }).agent
        .version,
    ).toBe(2);
    const o = parseSessionCreate({
      agent: { type: 'agent_with_overrides', id: AGENT, system: 'short', model: 'm2' },
      environment_id: ENV,
    });
    expect(o.agent.overrides).toEqual({ system: 'short', model: { id: 'm2' } });
  });

  it('keeps an initial user.define_outcome (with the default max_iterations)', () => {
    const input = parseSessionCreate({ agent: AGENT, environment_id: ENV, initial_events: [OUTCOME] });
    expect(input.initialEvents).toEqual([{ ...OUTCOME, max_iterations: 3 }]);
  });

  it('keeps initial user messages, a budget and metadata', () => {
    const input = parseSessionCreate({
      agent: AGENT,
      environment_id: ENV,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
      budget: { type: 'limit', max_list_cost: { amount: '2500', currency: 'USD' } },
      metadata: { a: 'b' },
    });
    expect(input.initialEvents).toHaveLength(1);
    expect(input.budget?.max_list_cost.amount).toBe('2500');
  });

  it.each<[string, unknown, RegExp]>([
    ['no agent', { environment_id: ENV }, /agent is required/],
    ['a wrong agent prefix', { agent: 'env_x', environment_id: ENV }, /agent_ id/],
    ['no environment', { agent: AGENT }, /environment_id is required/],
    [
      'an interrupt as an initial event',
      { agent: AGENT, environment_id: ENV, initial_events: [{ type: 'user.interrupt' }] },
      /only user.message/,
    ],
    [
      'two outcomes as initial events',
      {
        agent: AGENT,
        environment_id: ENV,
        initial_events: [OUTCOME, OUTCOME],
      },
      /at most one user.define_outcome/,
    ],
    [
      '51 initial events',
      {
        agent: AGENT,
        environment_id: ENV,
        initial_events: Array.from({ length: 51 }, () => ({
          type: 'user.message',
          content: [{ type: 'text', text: 'x' }],
        })),
      },
      /at most 50/,
    ],
    [
      'a budget in euros',
      {
        agent: AGENT,
        environment_id: ENV,
        budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'EUR' } },
      },
      /currency/,
    ],
    [
      'a fractional budget',
      {
        agent: AGENT,
        environment_id: ENV,
        budget: { type: 'limit', max_list_cost: { amount: '2.5', currency: 'USD' } },
      },
      /amount/,
    ],
    [
      'a malformed vault id',
      { agent: AGENT, environment_id: ENV, vault_ids: ['vlt_x'] },
      /vault_ids\[0\] must be a vlt_ id/,
    ],
    [
      'a vault id of another kind',
      { agent: AGENT, environment_id: ENV, vault_ids: ['env_01JD2Y3QX9V5M8K7R6T4W2P0AB'] },
      /must be a vlt_ id/,
    ],
    [
      'a non-string vault id',
      { agent: AGENT, environment_id: ENV, vault_ids: [7] },
      /vault_ids\[0\] must be a string/,
    ],
    [
      'vault_ids not an array',
      { agent: AGENT, environment_id: ENV, vault_ids: 'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB' },
      /vault_ids must be an array/,
    ],
    [
      'a vault listed twice',
      {
        agent: AGENT,
        environment_id: ENV,
        vault_ids: ['vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
      },
      /lists vlt_01JD2Y3QX9V5M8K7R6T4W2P0AB twice/,
    ],
    [
      'more than 20 vaults',
      {
        agent: AGENT,
        environment_id: ENV,
        vault_ids: Array.from(
          { length: 21 },
          (_, i) => `vlt_01JD2Y3QX9V5M8K7R6T4W2P0${String.fromCharCode(65 + Math.floor(i / 10))}${i % 10}`,
        ),
      },
      /at most 20 entries/,
    ],
    [
      'file resources',
      { agent: AGENT, environment_id: ENV, resources: [{ type: 'file', file_id: 'file_x' }] },
      /resources/,
    ],
  ])('rejects %s', (_label, body, message) => {
    expect(() => parseSessionCreate(body)).toThrow(message);
    expect(() => parseSessionCreate(body)).toThrow(DomainError);
  });
});

describe('client events', () => {
  it('accepts user.message text and bounded text documents, and user.interrupt', () => {
    const events = parseEventsBody({
      events: [
        {
          type: 'user.message',
          content: [
            { type: 'text', text: 'a' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
          ],
        },
        { type: 'user.interrupt' },
      ],
    });
    expect(events.map((e) => e.type)).toEqual(['user.message', 'user.interrupt']);
  });

  it.each<[string, unknown, RegExp]>([
    [
      'an image',
      { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'url', url: 'x' } }] }] },
      /images are not supported/,
    ],
    [
      'a PDF',
      {
        events: [
          {
            type: 'user.message',
            content: [
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' } },
            ],
          },
        ],
      },
      /PDFs are not supported/,
    ],
    ['an unknown type', { events: [{ type: 'user.shout' }] }, /must be one of/],
    ['empty content', { events: [{ type: 'user.message', content: [] }] }, /at least 1/],
    ['no events', { events: [] }, /at least 1/],
    [
      'a tool result for a malformed tool_use_id',
      { events: [{ type: 'user.tool_result', tool_use_id: 'sevt_x' }] },
      /sevt_ id of an agent.tool_use event/,
    ],
    [
      'a deny message on an allow',
      {
        events: [
          {
            type: 'user.tool_confirmation',
            tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0AB',
            result: 'allow',
            deny_message: 'no',
          },
        ],
      },
      /only allowed with result "deny"/,
    ],
    [
      'an unknown confirmation verdict',
      {
        events: [
          { type: 'user.tool_confirmation', tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0AB', result: 'maybe' },
        ],
      },
      /result must be one of/,
    ],
    [
      'an outcome without a rubric',
      { events: [{ type: 'user.define_outcome', description: 'x' }] },
      /events\[0\]\.rubric must be an object/,
    ],
    [
      'a non-text tool result block',
      {
        events: [
          {
            type: 'user.tool_result',
            tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0AB',
            content: [{ type: 'image' }],
          },
        ],
      },
      /content\[0\].type must be one of/,
    ],
  ])('rejects %s', (_label, body, message) => {
    expect(() => parseEventsBody(body)).toThrow(message);
  });
});

describe('freezeAgent', () => {
  it('applies overrides over the version and keeps the base id and version', () => {
    const def = {
      name: 'n',
      description: null,
      system: 'long',
      model: { id: 'm' },
      tools: [],
      mcp_servers: [],
      skills: [],
      multiagent: null,
      metadata: { x: 'y' },
    };
    const frozen = freezeAgent(AGENT, 3, def, { system: 'short' });
    expect(frozen).toMatchObject({ id: AGENT, type: 'agent', version: 3, system: 'short', name: 'n' });
    expect(frozen).not.toHaveProperty('metadata');
  });

  const pinned = {
    name: 'n',
    description: null,
    system: null,
    model: { id: 'm' },
    tools: parseTools([{ type: 'agent_toolset_20260401' }]),
    mcp_servers: [],
    skills: [{ type: 'custom', skill_id: 'skill_01JD2Y3QX9V5M8K7R6T4W2P0AB', version: 1 }],
    multiagent: null,
    metadata: {},
  };

  it.each([
    [
      'tools that drop the read tool of an Agent pinning Skills',
      {
        tools: parseAgentSelection({
          type: 'agent_with_overrides',
          id: AGENT,
          tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'read', enabled: false }] }],
        }).overrides!.tools,
      },
      /skills require the read tool/,
    ],
    ['tools without the toolset, for an Agent pinning Skills', { tools: [] }, /skills require the read tool/],
    [
      'mcp_servers no toolset references',
      { mcp_servers: [{ type: 'url', name: 'docs', url: 'https://mcp.example.com/mcp' }] },
      /not referenced by any mcp_toolset/,
    ],
  ])('refuses overrides that the Agent itself would refuse: %s', (_label, overrides, message) => {
    expect(() => freezeAgent(AGENT, 1, pinned as never, overrides as never)).toThrow(message);
  });

  it('accepts overrides that keep the read tool for pinned Skills', () => {
    expect(freezeAgent(AGENT, 1, pinned as never, { system: 'short' }).skills).toHaveLength(1);
  });
});

describe('File documents in messages', () => {
  const withSource = (source: unknown) => ({
    events: [{ type: 'user.message', content: [{ type: 'document', source }] }],
  });
  it('parses a file source for admission to resolve', () => {
    const [e] = parseEventsBody(withSource({ type: 'file', file_id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB' }));
    expect(e).toEqual({
      type: 'user.message',
      content: [
        {
          type: 'document',
          source: { type: 'file', file_id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB' },
          title: null,
          context: null,
        },
      ],
    });
  });
  it.each([
    ['a malformed id', { type: 'file', file_id: 'agent_x' }, /must be a file_ id/],
    ['an extra field', { type: 'file', file_id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0AB', url: 'x' }, /url/],
    ['a missing id', { type: 'file' }, /file_id/],
  ])('refuses %s', (_name, source, message) => {
    expect(() => parseEventsBody(withSource(source))).toThrow(message);
  });
});

describe('system.message placement and the model gate', () => {
  const msg = { type: 'user.message', content: [{ type: 'text', text: 'hi' }] };
  const sys = { type: 'system.message', content: [{ type: 'text', text: 'be terse' }] };
  it.each([
    ['alone', [sys], /must immediately follow/],
    ['after an interrupt', [{ type: 'user.interrupt' }, sys], /must immediately follow/],
    ['not last', [msg, sys, msg], /only sent in POST/],
    ['two of them', [msg, sys, sys], /only sent in POST|must immediately follow/],
    [
      'with a non-text block',
      [msg, { type: 'system.message', content: [{ type: 'image' }] }],
      /content\[0\]\.type/,
    ],
    ['with no content', [msg, { type: 'system.message', content: [] }], /content/],
  ])('refuses one %s', (_name, events, message) => {
    expect(() => parseEventsBody({ events })).toThrow(message);
  });
  it('well placed, it reaches the model gate (no mid-conversation system role on the Messages API)', () => {
    try {
      parseEventsBody({ events: [msg, sys] });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).details).toEqual({
        reason: 'model_does_not_support_mid_conversation_system',
      });
    }
  });
  it('is refused at creation', () => {
    expect(() =>
      parseSessionCreate({ agent: AGENT, environment_id: ENV, initial_events: [msg, sys] }),
    ).toThrow(/only sent in POST/);
  });
});

describe('parseAgentSelection: versions fit a PostgreSQL integer (found by Schemathesis: 23578259094 was a 500)', () => {
  const id = 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB';
  it.each([
    ['agent', 2_147_483_648],
    ['agent_with_overrides', 23_578_259_094],
  ])('%s version %d is 400', (type, version) => {
    expect(() => parseAgentSelection({ type, id, version })).toThrow(
      /agent\.version must be at most 2147483647/,
    );
  });
  it('accepts the largest integer', () => {
    expect(parseAgentSelection({ type: 'agent', id, version: 2_147_483_647 }).version).toBe(2_147_483_647);
  });
});
