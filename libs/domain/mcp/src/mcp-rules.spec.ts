import type { McpToolset } from '@mango/domain-agents';
import { classifyAddress, parseAddressAllowlist, refusedAddress } from './mcp-address';
import { mcpCallDecision, MCP_OUTCOME_UNKNOWN_MESSAGE } from './mcp-journal';
import { boundMcpResult, largeResultText, utf8Prefix } from './mcp-results';
import { declareMcpTools, mcpModelToolName, mcpToolPermission } from './mcp-tools';

const toolset = (over: Partial<McpToolset> = {}): McpToolset => ({
  type: 'mcp_toolset',
  mcp_server_name: 'tickets',
  default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
  configs: [],
  ...over,
});

describe('MCP tool permissions (docs/api-guide.md, Remote MCP)', () => {
  it.each([
    ['default allow', toolset(), 'search', 'allow'],
    [
      'default ask',
      toolset({ default_config: { enabled: true, permission_policy: { type: 'always_ask' } } }),
      'search',
      'ask',
    ],
    [
      'default deny',
      toolset({ default_config: { enabled: true, permission_policy: { type: 'deny' } } }),
      'search',
      'deny',
    ],
    [
      'default disabled',
      toolset({ default_config: { enabled: false, permission_policy: { type: 'always_allow' } } }),
      'search',
      null,
    ],
    [
      'config overrides default',
      toolset({ configs: [{ name: 'delete', enabled: true, permission_policy: { type: 'always_ask' } }] }),
      'delete',
      'ask',
    ],
    [
      'config enables under a disabled default',
      toolset({
        default_config: { enabled: false, permission_policy: { type: 'always_allow' } },
        configs: [{ name: 'search', enabled: true, permission_policy: { type: 'deny' } }],
      }),
      'search',
      'deny',
    ],
    [
      'config disables',
      toolset({ configs: [{ name: 'x', enabled: false, permission_policy: { type: 'always_allow' } }] }),
      'x',
      null,
    ],
    [
      'auto is ask until judged',
      toolset({ default_config: { enabled: true, permission_policy: { type: 'auto' } } }),
      'y',
      'ask',
    ],
    [
      'unknown policy fails closed to ask',
      toolset({ default_config: { enabled: true, permission_policy: { type: 'sometimes' } as never } }),
      'y',
      'ask',
    ],
  ])('%s', (_n, ts, tool, expected) => expect(mcpToolPermission(ts, tool)).toBe(expected));

  it('marks the tools whose policy is auto (judged before they run)', () => {
    const def = {
      tools: [
        toolset({
          default_config: { enabled: true, permission_policy: { type: 'auto' } },
          configs: [{ name: 'fixed', enabled: true, permission_policy: { type: 'always_allow' } }],
        }),
      ],
    } as never;
    const declared = declareMcpTools(def, 'tickets', [
      { name: 'fixed', inputSchema: {} },
      { name: 'judged', inputSchema: {} },
    ]);
    expect(declared.map((t) => [t.toolName, t.permission, t.auto])).toEqual([
      ['fixed', 'allow', undefined],
      ['judged', 'ask', true],
    ]);
  });

  it('declares enabled tools with model names, sorted, skipping invalid and duplicate names', () => {
    const def = {
      tools: [
        toolset({
          configs: [{ name: 'hidden', enabled: false, permission_policy: { type: 'always_allow' } }],
        }),
      ],
    };
    const declared = declareMcpTools(def, 'tickets', [
      {
        name: 'search',
        description: 'Search',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      },
      { name: 'hidden', inputSchema: { type: 'object' } },
      { name: 'bad name!', inputSchema: { type: 'object' } },
      { name: 'create', inputSchema: {} as never },
    ]);
    expect(declared.map((d) => [d.modelName, d.toolName, d.permission])).toEqual([
      ['mcp__tickets__create', 'create', 'allow'],
      ['mcp__tickets__search', 'search', 'allow'],
    ]);
    expect(declared[0]!.input_schema).toEqual({ type: 'object' });
    expect(declareMcpTools(def, 'other', [{ name: 'x', inputSchema: {} }])).toEqual([]);
  });

  it('model names are bounded and charset-safe', () => {
    expect(mcpModelToolName('s', 't-1')).toBe('mcp__s__t-1');
    expect(mcpModelToolName('s', 'a.b')).toBeNull();
    expect(mcpModelToolName('s', 'x'.repeat(130))).toBeNull();
  });
});

describe('MCP result bounds (docs/capabilities.md)', () => {
  it.each([
    [
      'joins text items inline',
      [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      false,
      { kind: 'inline', text: 'a\nb', isError: false },
    ],
    [
      'keeps isError',
      [{ type: 'text', text: 'boom' }],
      true,
      { kind: 'inline', text: 'boom', isError: true },
    ],
    ['empty content', [], false, { kind: 'inline', text: '', isError: false }],
  ])('%s', (_n, content, isError, expected) => expect(boundMcpResult(content, isError)).toEqual(expected));

  it.each([
    ['image', [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }]],
    ['audio', [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }]],
    [
      'embedded resource',
      [
        { type: 'text', text: 'x' },
        { type: 'resource', resource: { uri: 'file:///x' } },
      ],
    ],
    ['resource link', [{ type: 'resource_link', uri: 'file:///x', name: 'x' }]],
  ])('refuses %s content with an explicit error text', (_n, content) => {
    const r = boundMcpResult(content, false);
    expect(r.kind).toBe('refused');
    expect(r.text).toMatch(/does not support .*binary content/);
  });

  it('large text keeps a bounded preview; beyond the File bound it is refused', () => {
    const r = boundMcpResult([{ type: 'text', text: 'é'.repeat(60) }], false, {
      inlineBytes: 101,
      fileBytes: 1000,
    });
    expect(r).toMatchObject({ kind: 'large', bytes: 120 });
    if (r.kind !== 'large') throw new Error('expected large');
    expect(r.preview).toBe('é'.repeat(50)); // 100 bytes, never half a code point
    expect(largeResultText(r, 'file_X')).toMatch(
      /100 of 120 bytes shown\. The complete result is File file_X/,
    );
    expect(largeResultText(r, null)).toMatch(/Files storage is not configured/);
    expect(
      boundMcpResult([{ type: 'text', text: 'x'.repeat(1001) }], false, { fileBytes: 1000, inlineBytes: 10 })
        .kind,
    ).toBe('refused');
    expect(utf8Prefix('abc', 10)).toBe('abc');
  });
});

describe('MCP call journal decisions', () => {
  it.each([
    ['no row', null, 'send'],
    ['row without intent', { intentAt: null, resultAt: null }, 'send'],
    ['intent, no result (crash mid-call)', { intentAt: 't1', resultAt: null }, 'outcome_unknown'],
    ['intent and result', { intentAt: 't1', resultAt: 't2' }, 'done'],
  ])('%s → %s', (_n, row, decision) => expect(mcpCallDecision(row)).toBe(decision));

  it('the outcome-unknown text says it was not resent', () => {
    expect(MCP_OUTCOME_UNKNOWN_MESSAGE).toMatch(/not sent again/);
  });
});

describe('MCP connectivity rule', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['not-an-ip', 'reserved'],
  ])('%s is %s', (ip, cls) => expect(classifyAddress(ip)).toBe(cls));

  it.each([
    '64:ff9b::10.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b:1::a00:1',
    '::ffff:0:127.0.0.1',
    '2002:7f00:1::',
    '168.63.129.16',
  ])('%s (an embedded or cloud-internal form) is refused', (ip) =>
    expect(refusedAddress(ip, parseAddressAllowlist(undefined))).not.toBeNull(),
  );

  it('refuses non-public addresses unless allowlisted', () => {
    const none = parseAddressAllowlist(undefined);
    expect(refusedAddress('8.8.8.8', none)).toBeNull();
    expect(refusedAddress('127.0.0.1', none)).toMatch(/loopback address.*MANGO_MCP_ALLOWED_ADDRESSES/);
    expect(refusedAddress('169.254.169.254', none)).toMatch(/metadata address/);
    const loop = parseAddressAllowlist('127.0.0.1/32, ::1');
    expect(refusedAddress('127.0.0.1', loop)).toBeNull();
    expect(refusedAddress('::1', loop)).toBeNull();
    expect(refusedAddress('127.0.0.2', loop)).toMatch(/loopback/);
    expect(refusedAddress('10.0.0.1', parseAddressAllowlist('10.0.0.0/8'))).toBeNull();
    // The port is named only when an entry limits ports.
    expect(refusedAddress('10.0.0.1', none, 80)).toMatch(/^10\.0\.0\.1 is a private address;/);
    const ported = parseAddressAllowlist('10.0.0.1:8443');
    expect(refusedAddress('10.0.0.1', ported, 8443)).toBeNull();
    expect(refusedAddress('10.0.0.1', ported, 80)).toMatch(/^10\.0\.0\.1 is a private address on port 80;/);
  });

  it.each([['nope'], ['10.0.0.0/33'], ['::1/129'], ['1.2.3.4/x']])('allowlist %p is refused', (raw) => {
    expect(() => parseAddressAllowlist(raw)).toThrow(/MANGO_MCP_ALLOWED_ADDRESSES/);
  });
});
