import { mcpUrlKey, readMcpServerUrl } from './mcp-url';

describe('mcpUrlKey (openapi.yaml, Vaults; docs/api-guide.md, Vaults URL matching)', () => {
  it.each([
    ['https://mcp.example.com/mcp', 'https://mcp.example.com/mcp'],
    ['HTTPS://MCP.Example.COM/mcp', 'https://mcp.example.com/mcp'],
    ['https://mcp.example.com:443/mcp', 'https://mcp.example.com/mcp'],
    ['http://mcp.example.com:80/mcp', 'http://mcp.example.com/mcp'],
    ['https://mcp.example.com:8443/mcp', 'https://mcp.example.com:8443/mcp'],
    ['https://mcp.example.com/mcp/', 'https://mcp.example.com/mcp'],
    ['https://mcp.example.com/', 'https://mcp.example.com'],
    ['https://mcp.example.com', 'https://mcp.example.com'],
    ['https://mcp.example.com/mcp?tenant=A', 'https://mcp.example.com/mcp?tenant=A'],
    ['https://mcp.example.com/mcp#frag', 'https://mcp.example.com/mcp'],
    ['http://127.0.0.1:9000/mcp', 'http://127.0.0.1:9000/mcp'],
  ])('%s → %s', (raw, key) => expect(mcpUrlKey(raw)).toBe(key));

  it('keeps path case and distinguishes scheme and port', () => {
    expect(mcpUrlKey('https://h/MCP')).not.toBe(mcpUrlKey('https://h/mcp'));
    expect(mcpUrlKey('http://h/mcp')).not.toBe(mcpUrlKey('https://h/mcp'));
    expect(mcpUrlKey('https://h:444/mcp')).not.toBe(mcpUrlKey('https://h/mcp'));
  });

  it.each([
    'ftp://h/mcp',
    'mcp.example.com/mcp',
    '',
    'https://user:pw@h/mcp',
    'https://user@h/mcp',
    'file:///x',
  ])('refuses %p', (raw) => expect(mcpUrlKey(raw)).toBeNull());

  it('readMcpServerUrl names the field and bounds the length', () => {
    expect(() => readMcpServerUrl(42, 'auth.mcp_server_url')).toThrow('auth.mcp_server_url must be a string');
    expect(() => readMcpServerUrl('nope', 'u')).toThrow('absolute http or https URL');
    expect(() => readMcpServerUrl(`https://h/${'a'.repeat(2048)}`, 'u')).toThrow('at most 2048');
    expect(readMcpServerUrl('https://H/x/', 'u')).toEqual({ url: 'https://H/x/', key: 'https://h/x' });
  });
});
