import { parseAddressAllowlist } from '@mango/domain-mcp';
import { createServer } from 'node:http';
import { startMcpTestServer, McpTestServer } from '@mango/testing';
import { McpAuthenticationError, McpConnectionError, McpConnector, McpToolError } from '@mango/adapter-mcp';

/** Against a real MCP server (official SDK McpServer over Streamable HTTP) in its own process. */
describe('McpConnector (real MCP server process)', () => {
  let server: McpTestServer;
  const token = 'mcp-bearer-token-4c1e9a';
  const loopback = new McpConnector({ allowlist: parseAddressAllowlist('127.0.0.1/32'), timeoutMs: 5000 });

  beforeAll(async () => {
    server = await startMcpTestServer([token]);
  }, 30_000);
  afterAll(() => server.stop());

  it('lists the tools and calls one with the bearer token; the server saw that token', async () => {
    const tools = await loopback.listTools({ url: server.url, bearer: token });
    expect(tools.map((t) => t.name).sort()).toEqual(['big', 'echo', 'image', 'slow']);
    expect(tools.find((t) => t.name === 'echo')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
    });
    const r = await loopback.callTool({ url: server.url, bearer: token }, 'echo', { text: 'hi' });
    expect(r).toEqual({ content: [{ type: 'text', text: 'echo: hi' }], isError: false });
    const calls = server.calls().filter((c) => c.mcp_call === 'echo');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.token_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(server.process.logs()).not.toContain(token);
  });

  it('a wrong or missing token is an authentication failure', async () => {
    await expect(loopback.listTools({ url: server.url, bearer: 'wrong' })).rejects.toBeInstanceOf(
      McpAuthenticationError,
    );
    await expect(loopback.listTools({ url: server.url })).rejects.toThrow(
      /refused the credential \(HTTP 401\)/,
    );
  });

  it('an unknown tool is an error result from the server, not a connection failure', async () => {
    const r = await loopback.callTool({ url: server.url, bearer: token }, 'nope', {});
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/Tool nope not found/);
    expect(new McpToolError('x')).toBeInstanceOf(Error);
  });

  it('refuses loopback without the allowlist, before any request leaves', async () => {
    const strict = new McpConnector({ allowlist: parseAddressAllowlist(undefined), timeoutMs: 5000 });
    const before = server.calls().length;
    await expect(strict.callTool({ url: server.url, bearer: token }, 'echo', { text: 'x' })).rejects.toThrow(
      /loopback address; MCP servers on private networks are refused .*MANGO_MCP_ALLOWED_ADDRESSES/,
    );
    await expect(strict.listTools({ url: 'http://localhost:1/mcp' })).rejects.toBeInstanceOf(
      McpConnectionError,
    );
    expect(server.calls().length).toBe(before);
  });

  it('connects only to the address its own lookup judged: a name that resolves to loopback on the second lookup (DNS rebinding) is refused', async () => {
    const port = new URL(server.url).port;
    let lookups = 0;
    const rebinding = new McpConnector({
      allowlist: parseAddressAllowlist(undefined),
      timeoutMs: 5000,
      // The up-front check sees a public address; the lookup made when the socket opens sees loopback.
      resolve: async () =>
        ++lookups === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
    });
    const before = server.calls().length;
    await expect(
      rebinding.callTool({ url: `http://rebind.example.test:${port}/mcp`, bearer: token }, 'echo', {
        text: 'x',
      }),
    ).rejects.toThrow(/MCP server rebind\.example\.test refused: .*loopback/);
    expect(lookups).toBeGreaterThanOrEqual(2);
    expect(server.calls().length).toBe(before);
    // The same name, allowed: the connection goes to exactly the address the lookup returned.
    const pinned = new McpConnector({
      allowlist: parseAddressAllowlist('127.0.0.1/32'),
      timeoutMs: 5000,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const r = await pinned.callTool({ url: `http://mcp.example.test:${port}/mcp`, bearer: token }, 'echo', {
      text: 'pinned',
    });
    expect(r.content).toEqual([{ type: 'text', text: 'echo: pinned' }]);
  });

  it('times out on a server that never answers', async () => {
    const hang = createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const port = (hang.address() as { port: number }).port;
    const quick = new McpConnector({ allowlist: parseAddressAllowlist('127.0.0.1'), timeoutMs: 500 });
    const started = Date.now();
    await expect(quick.listTools({ url: `http://127.0.0.1:${port}/mcp` })).rejects.toThrow(
      /did not answer within 500 ms/,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    hang.closeAllConnections();
    hang.close();
  });

  it('says clearly that a server without Streamable HTTP (e.g. deprecated HTTP+SSE only) is unsupported', async () => {
    const old = createServer((_req, res) => {
      res.writeHead(405, { allow: 'GET' });
      res.end();
    });
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
    const port = (old.address() as { port: number }).port;
    await expect(loopback.listTools({ url: `http://127.0.0.1:${port}/sse` })).rejects.toThrow(
      /deprecated HTTP\+SSE transport is not supported/,
    );
    old.close();
  });
});
