import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { outboundLimitIn } from '@mango/platform-egress';
import { createMcpTestServer } from '@mango/testing';
import { McpConnectionError, McpConnector } from './mcp-connector';

/**
 * The connector's transport bounds against the real MCP SDK server (in this process, on 127.0.0.1): an
 * oversized answer is refused at the cap while it streams in, and the cancellation signal aborts a call.
 */
describe('McpConnector bounds (real MCP SDK server on loopback)', () => {
  const token = 'bounds-token';
  let server: Server;
  let url: string;
  const closed: Promise<void>[] = [];

  beforeAll(async () => {
    server = createMcpTestServer({ tokens: () => [token] });
    server.on('connection', (s: Socket) => closed.push(new Promise((r) => s.once('close', () => r()))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  const connector = (maxResponseBytes: number, timeoutMs = 30_000) =>
    new McpConnector({ allowlist: parseAddressAllowlist('127.0.0.1/32'), timeoutMs, maxResponseBytes });

  it('a result within the cap comes through whole', async () => {
    const r = await connector(256 * 1024).callTool({ url, bearer: token }, 'big', { bytes: 100_000 });
    expect((r.content[0]!.text as string).length).toBe(100_000);
  });

  it('an oversized result is refused at the cap while it streams in (never read whole), and its connection is closed', async () => {
    const cap = 256 * 1024;
    const err = await connector(cap)
      .callTool({ url, bearer: token }, 'big', { bytes: 8 * 1024 * 1024 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpConnectionError);
    expect((err as Error).message).toMatch(/larger than the 262144-byte cap/);
    const limit = outboundLimitIn(err);
    expect(limit?.limit).toBe('too_large');
    // Counted as it arrived: the cap plus at most the chunk that crossed it, far below the 8 MiB sent.
    expect(limit!.bytesRead).toBeGreaterThan(cap);
    expect(limit!.bytesRead).toBeLessThan(cap + 1024 * 1024);
    await Promise.all(closed);
  });

  it('the caller’s cancellation aborts a call in flight', async () => {
    const cancel = new AbortController();
    const calling = connector(1024 * 1024)
      .callTool({ url, bearer: token }, 'slow', { ms: 60_000, text: 'never' }, cancel.signal)
      .catch((e: unknown) => e);
    const before = closed.length;
    while (closed.length === before) await new Promise((r) => setTimeout(r, 10));
    cancel.abort(new Error('activity cancelled'));
    const err = await calling;
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(McpConnectionError);
    await Promise.all(closed);
  });
});
