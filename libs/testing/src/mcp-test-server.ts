import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { AppProcess, freePort, startApp } from './app-process';

/**
 * A real MCP server for tests: the official SDK's `McpServer` over `StreamableHTTPServerTransport`
 * (stateless, one server per request), requiring `Authorization: Bearer <token>` (401 otherwise). Tools:
 * `echo {text}` → text; `big {bytes}` → that much text; `image` → binary (image) content; `slow {ms, text}`
 * → text after a delay. Every tools/call is logged as one JSON line `{"mcp_call": name, "args": …,
 * "token_sha256": …}` (digests only: the token itself is never printed).
 */
export function createMcpTestServer(opts: {
  tokens?: () => string[];
  accepts?: (token: string) => boolean;
}): Server {
  const accepts = opts.accepts ?? ((t: string) => (opts.tokens?.() ?? []).includes(t));
  const build = () => {
    const server = new McpServer({ name: 'mango-test-mcp', version: '1.0.0' });
    const seen = (name: string, args: unknown, token: string) =>
      process.stdout.write(
        `${JSON.stringify({ mcp_call: name, args, token_sha256: createHash('sha256').update(token).digest('hex') })}\n`,
      );
    return { server, seen };
  };
  return createServer(async (req: IncomingMessage, res) => {
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer (.+)$/.exec(auth)?.[1] ?? '';
    if (!token || !accepts(token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const { server, seen } = build();
    server.registerTool(
      'echo',
      { description: 'Echo the text back.', inputSchema: { text: z.string() } },
      async ({ text }) => {
        seen('echo', { text }, token);
        return { content: [{ type: 'text', text: `echo: ${text}` }] };
      },
    );
    server.registerTool(
      'big',
      {
        description: 'Return this many bytes of text (x…, or numbered lines with numbered: true).',
        inputSchema: { bytes: z.number().int(), numbered: z.boolean().optional() },
      },
      async ({ bytes, numbered }) => {
        seen('big', { bytes }, token);
        return { content: [{ type: 'text', text: numbered ? numberedText(bytes) : 'x'.repeat(bytes) }] };
      },
    );
    server.registerTool('image', { description: 'Return a PNG.' }, async () => {
      seen('image', {}, token);
      return { content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] };
    });
    server.registerTool(
      'slow',
      { description: 'Answer after a delay.', inputSchema: { ms: z.number().int(), text: z.string() } },
      async ({ ms, text }) => {
        seen('slow', { ms, text }, token);
        await new Promise((r) => setTimeout(r, ms));
        return { content: [{ type: 'text', text: `slow: ${text}` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
}

export interface McpTestServer {
  url: string;
  process: AppProcess;
  /** The tools/call lines the server logged so far. */
  calls(): Array<{ mcp_call: string; args: Record<string, unknown>; token_sha256: string }>;
  stop(): Promise<void>;
}

/** Starts the MCP test server as its own process on 127.0.0.1, accepting `tokens` (comma-separated). */
export async function startMcpTestServer(tokens: string[]): Promise<McpTestServer> {
  const port = await freePort();
  const proc = await startApp(
    'libs/testing/src/mcp-test-server.ts',
    { MCP_TEST_PORT: String(port), MCP_TEST_TOKENS: tokens.join(',') },
    async (logs) => logs().includes('mcp test server listening'),
  );
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: proc,
    calls: () =>
      proc
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{"mcp_call"'))
        .map((l) => JSON.parse(l)),
    stop: async () => void (await proc.stop()),
  };
}

if (require.main === module) {
  const env = process.env;
  const server = createMcpTestServer({
    tokens: () => (env.MCP_TEST_TOKENS ?? '').split(',').filter(Boolean),
  });
  server.listen(Number(env.MCP_TEST_PORT), '127.0.0.1', () =>
    process.stdout.write('mcp test server listening\n'),
  );
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

/** `bytes` bytes of numbered lines (`line 000001\n` …): text whose every part differs, for byte equality. */
export function numberedText(bytes: number): string {
  const lines: string[] = [];
  for (let i = 1, n = 0; n < bytes; i++) {
    const l = `line ${String(i).padStart(6, '0')}\n`;
    lines.push(l);
    n += l.length;
  }
  return lines.join('').slice(0, bytes);
}
