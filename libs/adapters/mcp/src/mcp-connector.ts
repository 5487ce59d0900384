import {
  boundedFetch,
  egressRefusalIn,
  JudgedEgress,
  OutboundLimitError,
  outboundLimitIn,
  Resolver,
} from '@mango/platform-egress';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { AddressAllowlist, ListedMcpTool, McpContentItem, refusedAddress } from '@mango/domain-mcp';

/** The server could not be reached or does not speak MCP over Streamable HTTP (`mcp_connection_failed_error`). */
export class McpConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpConnectionError';
  }
}

/** The server refused the credential (401/403) (`mcp_authentication_failed_error`). */
export class McpAuthenticationError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'McpAuthenticationError';
  }
}

/** The server answered the request with a JSON-RPC error (e.g. an unknown tool): the call's error result. */
export class McpToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolError';
  }
}

export interface McpTarget {
  url: string;
  /** The bearer token from the Session's vault credential, if any (never logged). */
  bearer?: string;
}

export interface McpConnectorOptions {
  allowlist: AddressAllowlist;
  /** Per request (list or call) timeout, covering every answer's headers and body; the turn never hangs on a dead server. */
  timeoutMs: number;
  /** The most bytes of one HTTP answer read, counted while reading (`MANGO_MCP_MAX_RESPONSE_BYTES`). */
  maxResponseBytes?: number;
  /** Name resolution (the system resolver by default; tests inject their own). */
  resolve?: Resolver;
}

/** Default cap of one MCP HTTP answer: room for the largest result kept as a File (32 MiB of text) in JSON. */
export const MCP_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * The orchestrator's MCP client: the official TypeScript SDK's `Client` over Streamable HTTP. The
 * deprecated HTTP+SSE transport is not supported (a server that only speaks it fails to initialise and
 * is reported as such). Redirects are not followed. The connectivity rule is enforced where the socket
 * is opened: the HTTP client's own DNS lookup judges every address the name resolves to and connects
 * only to a judged one, so a name that answers a public address to a first lookup and a private one to
 * the next (DNS rebinding) cannot reach the private one. A clear refusal is also given up front. Every
 * HTTP exchange of the transport is bounded (boundedFetch): the timeout covers headers and body, each
 * answer is counted while it streams in and cut at `maxResponseBytes` (never buffered whole first), and
 * the caller's signal (the activity's cancellation) aborts it.
 */
export class McpConnector {
  private readonly egress: JudgedEgress;

  constructor(private readonly options: McpConnectorOptions) {
    this.egress = new JudgedEgress((a, port) => refusedAddress(a, options.allowlist, port), options.resolve);
  }

  async listTools(target: McpTarget, signal?: AbortSignal): Promise<ListedMcpTool[]> {
    return this.withClient(target, signal, async (client, opts) => {
      const tools: ListedMcpTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const res = await client.listTools(cursor ? { cursor } : undefined, opts);
        for (const t of res.tools)
          tools.push({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema as Record<string, unknown>,
          });
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      return tools;
    });
  }

  async callTool(
    target: McpTarget,
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ content: McpContentItem[]; isError: boolean }> {
    return this.withClient(target, signal, async (client, opts) => {
      const res = await client.callTool({ name, arguments: args }, undefined, opts);
      const content = Array.isArray(res.content) ? (res.content as McpContentItem[]) : [];
      return { content, isError: res.isError === true };
    });
  }

  private async checkHost(url: URL): Promise<void> {
    try {
      await this.egress.check(url);
    } catch (e) {
      throw new McpConnectionError(`MCP server ${(e as Error).message}`);
    }
  }

  private async withClient<T>(
    target: McpTarget,
    signal: AbortSignal | undefined,
    fn: (client: Client, opts: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw new McpConnectionError('the MCP server URL is not a valid URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new McpConnectionError('MCP servers are reached over http(s) only');
    await this.checkHost(url);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    // A tripped bound fails the whole operation at once (the SDK would otherwise wait on a broken stream).
    const limited = new AbortController();
    const combined = AbortSignal.any([...(signal ? [signal] : []), timeout, limited.signal]);
    const bounded = boundedFetch(this.egress.fetch, {
      deadlineMs: this.options.timeoutMs,
      maxBytes: this.options.maxResponseBytes ?? MCP_MAX_RESPONSE_BYTES,
      onLimit: (e) => limited.abort(e),
    });
    let lastStatus: number | undefined;
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: {
        redirect: 'error',
        headers: target.bearer ? { authorization: `Bearer ${target.bearer}` } : {},
      },
      redirectPolicy: 'same-origin',
      fetch: async (input, init) => {
        const res = await bounded(input as string | URL, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, combined]) : combined,
        });
        lastStatus = res.status;
        return res;
      },
    });
    const client = new Client({ name: 'mango-orchestrator', version: '0.1.0' });
    try {
      await client.connect(transport, { signal: combined, timeout: this.options.timeoutMs });
      return await fn(client, { signal: combined, timeout: this.options.timeoutMs });
    } catch (err) {
      const limit = limited.signal.aborted ? (limited.signal.reason as OutboundLimitError) : null;
      throw this.translate(err, lastStatus, timeout.aborted, signal?.aborted === true, limit);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  private translate(
    err: unknown,
    status: number | undefined,
    timedOut: boolean,
    cancelled: boolean,
    limit: OutboundLimitError | null,
  ): Error {
    if (cancelled) return err instanceof Error ? err : new Error(String(err));
    const bound = limit ?? outboundLimitIn(err);
    if (bound)
      return new McpConnectionError(
        bound.limit === 'too_large'
          ? `the MCP server's answer is larger than the ${this.options.maxResponseBytes ?? MCP_MAX_RESPONSE_BYTES}-byte cap`
          : `the MCP server did not answer within ${this.options.timeoutMs} ms`,
        { cause: bound },
      );
    if (status === 401 || status === 403)
      return new McpAuthenticationError(`the MCP server refused the credential (HTTP ${status})`, status);
    if (timedOut)
      return new McpConnectionError(`the MCP server did not answer within ${this.options.timeoutMs} ms`);
    if (status === 404 || status === 405)
      return new McpConnectionError(
        `the MCP server answered HTTP ${status} to a Streamable HTTP request: Mango supports only the Streamable HTTP transport (the deprecated HTTP+SSE transport is not supported)`,
      );
    if (status !== undefined && status >= 400)
      return new McpConnectionError(`the MCP server answered HTTP ${status}`);
    if (err instanceof McpConnectionError || err instanceof McpAuthenticationError) return err;
    // A refusal at connect time (the judged lookup) arrives wrapped by fetch and the SDK.
    const refusal = egressRefusalIn(err);
    if (refusal) return new McpConnectionError(`MCP server ${refusal.message}`);
    if (err instanceof McpError && err.code !== -32001)
      return new McpToolError(`the MCP server answered with an error: ${err.message.slice(0, 500)}`);
    // Tool-level JSON-RPC errors and connection failures: a bounded message without secrets.
    const message = err instanceof Error ? err.message : String(err);
    return new McpConnectionError(`MCP request failed: ${message.slice(0, 300)}`);
  }
}
