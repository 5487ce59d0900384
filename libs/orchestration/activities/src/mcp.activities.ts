import { threadContext } from './thread-context';
import { McpAuthenticationError, McpConnectionError, McpConnector, McpToolError } from '@mango/adapter-mcp';
import type { AgentDefinition, McpServer } from '@mango/domain-agents';
import {
  boundMcpResult,
  DeclaredMcpTool,
  declareMcpTools,
  largeResultText,
  mcpCallDecision,
  MCP_OUTCOME_UNKNOWN_MESSAGE,
} from '@mango/domain-mcp';
import { mcpUrlKey } from '@mango/domain-vaults';
import { OAuthRefresher, openSecrets } from '@mango/feature-vaults';
import {
  McpCallEntity,
  NewSessionEvent,
  SessionEntity,
  SessionEventEntity,
  SessionLog,
  VaultCredentialRepository,
} from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { Keyring } from '@mango/platform-secrets';
import { contextFrom, SpanKind, SpanStatusCode, tracer } from '@mango/platform-tracing';
import { CancelledFailure, Context, log } from '@temporalio/activity';
import { LessThan, type DataSource, type EntityManager } from 'typeorm';

const internal = (type: string, body: Record<string, unknown>, idempotencyKey: string): NewSessionEvent => ({
  type,
  body,
  processed: true,
  runnable: false,
  idempotencyKey,
});

export interface McpRuntimeDeps {
  dataSource: DataSource;
  /** The Session log repository (default: one on `dataSource`); every event is appended through it. */
  sessionLog?: SessionLog;
  connector: McpConnector;
  /** Null: no credential can be opened (servers are called without one). */
  keyring: Keyring | null;
  /** Refreshes `mcp_oauth` credentials (before expiry and once after a 401). */
  refresher?: OAuthRefresher;
  /** The Vault credential reads (default: a repository on `dataSource`). */
  credentials?: VaultCredentialRepository;
  /**
   * Files storage for results larger than the inline bound (absent: the model gets the bounded part and
   * a note that the rest was not kept).
   */
  resultFiles?: McpResultFiles;
  /** `mango_tool_execution_duration_seconds{kind="mcp"}` of each call (absent: not measured). */
  metrics?: MangoMetrics;
}

/** Where a large textual MCP result is kept: a File of the Session's Workspace (apps/files serves it). */
export interface McpResultFiles {
  /**
   * Stores `text` as the File `fileId` in `workspaceId`. Idempotent: when that File already exists it is
   * kept as it is (the id is derived from the call, so a retried call never makes a second File).
   */
  store(file: { workspaceId: string; fileId: string; filename: string; text: string }): Promise<void>;
}

/** The File id of an MCP call's large result: derived from the `agent.mcp_tool_use` event id. */
export function mcpResultFileId(mcpToolUseId: string): string {
  return `file_${mcpToolUseId.slice(mcpToolUseId.indexOf('_') + 1)}`;
}

interface ResolvedCredential {
  id: string;
  kind: string;
  token: string | undefined;
}

export interface McpDeclaration {
  tools: DeclaredMcpTool[];
  failures: Array<{
    server: string;
    type: 'mcp_connection_failed_error' | 'mcp_authentication_failed_error';
    message: string;
  }>;
}

/** Tool listings are cached per Session turn and server, at most this many entries per process. */
const LISTING_CACHE_MAX = 256;

/**
 * Remote MCP in the orchestrator: tool listing for the model (per Session turn, cached with a bound) and
 * journaled calls. Credentials are read from the Session's Vaults here and nowhere else; they are passed
 * to the MCP client only and never to an event, a log line, an error or an activity result (so never to
 * a Temporal history).
 */
export class McpRuntime {
  private readonly listings = new Map<string, Promise<DeclaredMcpTool[]>>();
  private readonly sessionLog: SessionLog;
  private readonly credentials: VaultCredentialRepository;

  constructor(private readonly deps: McpRuntimeDeps) {
    this.sessionLog = deps.sessionLog ?? new SessionLog(deps.dataSource);
    this.credentials = deps.credentials ?? new VaultCredentialRepository(deps.dataSource);
  }

  /**
   * The credential for `serverUrl` from the Session's Vaults (first Vault in `vault_ids` order with a
   * match). An `mcp_oauth` credential is refreshed first when it expires within the skew; `signal` (the
   * activity's cancellation) ends a refresh in flight.
   */
  async credentialFor(
    em: EntityManager,
    vaultIds: string[],
    serverUrl: string,
    signal?: AbortSignal,
  ): Promise<ResolvedCredential | undefined> {
    const key = mcpUrlKey(serverUrl);
    if (!key || vaultIds.length === 0) return undefined;
    const row = await this.credentials.findActiveForServer(em, vaultIds, key);
    if (!row || !this.deps.keyring) return undefined;
    if (row.kind === 'mcp_oauth' && this.deps.refresher) {
      const r = await this.deps.refresher.refresh(row.id, { signal });
      if (r.status === 'succeeded') return { id: row.id, kind: row.kind, token: r.accessToken };
      throw new McpAuthenticationError(`refreshing the OAuth credential failed: ${r.message}`, 401);
    }
    const secrets = openSecrets(this.deps.keyring, row.id, row);
    return {
      id: row.id,
      kind: row.kind,
      token: row.kind === 'static_bearer' ? secrets?.token : secrets?.access_token,
    };
  }

  /**
   * Runs `fn` with the server's credential; after a 401/403 an `mcp_oauth` credential is refreshed once
   * (unless another process already replaced the refused token) and `fn` runs once more. A request the
   * server refused for authentication was not executed, so repeating it is safe.
   */
  private async withCredential<T>(
    vaultIds: string[],
    url: string,
    fn: (bearer: string | undefined) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const cred = await this.credentialFor(this.deps.dataSource.manager, vaultIds, url, signal);
    try {
      return await fn(cred?.token);
    } catch (err) {
      if (!(err instanceof McpAuthenticationError) || cred?.kind !== 'mcp_oauth' || !this.deps.refresher)
        throw err;
      const r = await this.deps.refresher.refresh(cred.id, { staleAccessToken: cred.token, signal });
      if (r.status !== 'succeeded')
        throw new McpAuthenticationError(
          `${err.message}; refreshing the OAuth credential failed: ${r.message}`,
          err.status,
        );
      return fn(r.accessToken);
    }
  }

  /** The MCP tools the model gets this turn (listed once per turn and server), and the servers that failed. */
  async declare(
    sessionId: string,
    turn: number,
    agent: AgentDefinition,
    vaultIds: string[],
    signal?: AbortSignal,
  ): Promise<McpDeclaration> {
    const out: McpDeclaration = { tools: [], failures: [] };
    for (const server of agent.mcp_servers ?? []) {
      const cacheKey = `${sessionId}:${turn}:${server.name}`;
      let listing = this.listings.get(cacheKey);
      if (!listing) {
        listing = this.list(server, agent, vaultIds, signal);
        this.listings.set(cacheKey, listing);
        while (this.listings.size > LISTING_CACHE_MAX)
          this.listings.delete(this.listings.keys().next().value!);
        listing.catch(() => this.listings.delete(cacheKey));
      }
      try {
        out.tools.push(...(await listing));
      } catch (err) {
        out.failures.push({
          server: server.name,
          type:
            err instanceof McpAuthenticationError
              ? 'mcp_authentication_failed_error'
              : 'mcp_connection_failed_error',
          message: (err as Error).message,
        });
      }
    }
    return out;
  }

  private async list(server: McpServer, agent: AgentDefinition, vaultIds: string[], signal?: AbortSignal) {
    const listed = await this.withCredential(
      vaultIds,
      server.url,
      (bearer) => this.deps.connector.listTools({ url: server.url, bearer }, signal),
      signal,
    );
    return declareMcpTools(agent, server.name, listed);
  }

  /**
   * Runs one `agent.mcp_tool_use` under the journal: the intent row commits before the request; the
   * call's single `agent.mcp_tool_result` and `result_at` commit together after it. A call whose intent
   * exists without a result (the orchestrator died mid-call) is not sent again: it gets an
   * outcome-unknown error result.
   */
  async call(sessionId: string, mcpToolUseId: string): Promise<void> {
    const plan = await this.sessionLog.withOpenSession(sessionId, async (tx, s) => {
      const use = await tx.findOne(SessionEventEntity, {
        where: { id: mcpToolUseId, sessionId, type: 'agent.mcp_tool_use' },
      });
      if (!use) return undefined;
      const row = await tx.findOne(McpCallEntity, { where: { mcpToolUseId } });
      const decision = mcpCallDecision(
        row ? { intentAt: row.intentAt.toISOString(), resultAt: row.resultAt?.toISOString() ?? null } : null,
      );
      if (decision === 'done') return undefined;
      // A delegate's call uses its own Agent's servers (ADR 0017); the primary's, the Session's Agent's.
      const agent = use.sessionThreadId
        ? (await threadContext(tx, s, use.sessionThreadId))?.agent
        : (s.agent as unknown as AgentDefinition);
      const server = (agent?.mcp_servers ?? []).find((m) => m.name === use.body.mcp_server_name);
      if (decision === 'outcome_unknown' || !server) {
        await this.recordResult(
          tx,
          s,
          mcpToolUseId,
          server ? MCP_OUTCOME_UNKNOWN_MESSAGE : 'The MCP server is not configured on this Session.',
          true,
        );
        return undefined;
      }
      await tx.insert(McpCallEntity, {
        mcpToolUseId,
        sessionId,
        serverName: server.name,
        toolName: use.body.name as string,
        intentAt: new Date(),
        resultAt: null,
      });
      // The turn's trace: the one the API stored on the latest user.message before this call.
      const origin = await tx.findOne(SessionEventEntity, {
        where: { sessionId, type: 'user.message', seq: LessThan(use.seq) },
        order: { seq: 'DESC' },
      });
      const tp = origin?.body._traceparent;
      return {
        server,
        vaultIds: s.vaultIds ?? [],
        workspaceId: s.workspaceId,
        name: use.body.name as string,
        input: use.body.input as Record<string, unknown>,
        traceparent: typeof tp === 'string' ? tp : undefined,
      };
    });
    if (!plan) return;
    const context = Context.current();
    const heartbeat = setInterval(() => context.heartbeat(), 1000);
    let text: string;
    let isError: boolean;
    let fileId: string | undefined;
    // `mango.mcp_tool_use <tool>`: the call to the MCP server, in the turn's trace (ids, names and the
    // outcome only — never the input, the result, the server's URL or the credential).
    const span = tracer().startSpan(
      `mango.mcp_tool_use ${plan.name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': plan.name,
          'gen_ai.tool.call.id': mcpToolUseId,
          'mango.session.id': sessionId,
          'mango.tool.kind': 'mcp',
          'mango.mcp.server.name': plan.server.name,
        },
      },
      contextFrom(plan.traceparent),
    );
    const started = performance.now();
    const endSpan = (outcome: 'ok' | 'error' | 'interrupted') => {
      this.deps.metrics?.toolExecutionDuration.observe(
        { tool: plan.name, kind: 'mcp', outcome },
        (performance.now() - started) / 1000,
      );
      span.setAttribute('mango.outcome', outcome);
      if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    try {
      const r = await this.withCredential(
        plan.vaultIds,
        plan.server.url,
        (bearer) =>
          this.deps.connector.callTool(
            { url: plan.server.url, bearer },
            plan.name,
            plan.input ?? {},
            context.cancellationSignal,
          ),
        context.cancellationSignal,
      );
      const bounded = boundMcpResult(r.content, r.isError);
      if (bounded.kind === 'inline') [text, isError] = [bounded.text, bounded.isError];
      else if (bounded.kind === 'large') {
        fileId = await this.storeLarge(plan.workspaceId, mcpToolUseId, plan.name, bounded.text);
        [text, isError] = [largeResultText(bounded, fileId ?? null), bounded.isError];
      } else [text, isError] = [bounded.text, true];
    } catch (err) {
      if (context.cancellationSignal.aborted) {
        endSpan('interrupted');
        await this.finish(
          sessionId,
          mcpToolUseId,
          'The MCP tool call was interrupted; its outcome is unknown.',
          true,
        );
        throw new CancelledFailure('the turn was interrupted');
      }
      isError = true;
      if (err instanceof McpAuthenticationError)
        text = `mcp_authentication_failed_error: ${err.message}. Check the Vault credential for ${plan.server.name}.`;
      else if (err instanceof McpConnectionError) text = `mcp_connection_failed_error: ${err.message}`;
      else if (err instanceof McpToolError) text = err.message;
      else text = `The MCP tool call failed: ${(err as Error).message.slice(0, 300)}`;
    } finally {
      clearInterval(heartbeat);
    }
    endSpan(isError ? 'error' : 'ok');
    await this.finish(sessionId, mcpToolUseId, text, isError, fileId);
  }

  /**
   * Keeps a large textual result as a File of the Session's Workspace; undefined when Files storage is
   * not configured or storing failed (the model then gets the bounded part with a note saying so).
   */
  private async storeLarge(
    workspaceId: string,
    mcpToolUseId: string,
    toolName: string,
    text: string,
  ): Promise<string | undefined> {
    if (!this.deps.resultFiles) return undefined;
    const fileId = mcpResultFileId(mcpToolUseId);
    try {
      await this.deps.resultFiles.store({
        workspaceId,
        fileId,
        filename: `mcp-result-${toolName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100)}.txt`,
        text,
      });
      return fileId;
    } catch (err) {
      log.warn(`the large result of ${mcpToolUseId} was not stored as a File: ${(err as Error).message}`);
      return undefined;
    }
  }

  private async finish(
    sessionId: string,
    id: string,
    text: string,
    isError: boolean,
    fileId?: string,
  ): Promise<void> {
    await this.sessionLog.withOpenSession(sessionId, (tx, s) =>
      this.recordResult(tx, s, id, text, isError, fileId),
    );
  }

  /** Appends the call's one result (idempotency key per call) and closes its journal row. */
  private async recordResult(
    tx: EntityManager,
    s: SessionEntity,
    id: string,
    text: string,
    isError: boolean,
    fileId?: string,
  ) {
    // The result belongs to the call's Thread.
    const use = await tx.findOne(SessionEventEntity, { where: { id, sessionId: s.id } });
    await this.sessionLog.append(
      tx,
      s,
      [
        {
          ...internal(
            'agent.mcp_tool_result',
            {
              mcp_tool_use_id: id,
              content: text ? [{ type: 'text', text }] : [],
              is_error: isError,
              ...(fileId ? { file_id: fileId } : {}),
            },
            `mcp:${id}:result`,
          ),
          ...(use?.sessionThreadId ? { sessionThreadId: use.sessionThreadId } : {}),
        },
      ],
      new Date(),
    );
    await tx.query(
      `INSERT INTO mcp_calls (mcp_tool_use_id, session_id, server_name, tool_name, intent_at, result_at)
       SELECT $1, $2, '', '', now(), now() WHERE NOT EXISTS (SELECT 1 FROM mcp_calls WHERE mcp_tool_use_id = $1)`,
      [id, s.id],
    );
    await tx.query('UPDATE mcp_calls SET result_at = coalesce(result_at, now()) WHERE mcp_tool_use_id = $1', [
      id,
    ]);
  }
}
