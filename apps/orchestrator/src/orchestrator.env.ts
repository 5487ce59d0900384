import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';
import { withS3CredentialsEnv } from '@mango/adapter-object-store';
import { withTemporalEnv } from '@mango/platform-temporal';
import { ObservabilityEnv } from '@mango/platform-tracing';

/**
 * Every variable (metrics and tracing: ObservabilityEnv; the Temporal connection: withTemporalEnv)
 * apps/orchestrator reads, validated once at boot.
 */
export class OrchestratorEnv extends withS3CredentialsEnv(
  withTemporalEnv(ObservabilityEnv, { addressRequired: true }),
) {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @IsString()
  @MinLength(1)
  MANGO_TASK_QUEUE: string = 'mango';

  /**
   * A workflow bundle built ahead of time (`bundleWorkflowCode` from `@temporalio/worker`, see
   * apps/orchestrator/src/workflow-bundle.ts): the worker loads it instead of bundling the workflow sources
   * with webpack at every start. Unset (the default): bundled at start from the sources. The bundle must
   * come from the same sources as this process; the orchestrator test suites build one per run.
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  MANGO_WORKFLOW_BUNDLE?: string;

  /** The Anthropic Messages API endpoint (a scripted server in tests). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_MODEL_BASE_URL?: string;

  @IsOptional()
  @IsString()
  MANGO_MODEL_API_KEY?: string;

  /** The whole model request, headers and the entire streamed reply, milliseconds. */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  MANGO_MODEL_TIMEOUT_MS: number = 600_000;

  /** The longest silence of the model endpoint while a reply is awaited (before headers or mid-stream), ms. */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  MANGO_MODEL_IDLE_TIMEOUT_MS: number = 120_000;

  /** The most bytes of one model reply read (the event stream, counted while it arrives). */
  @Type(() => Number)
  @IsInt()
  @Min(65_536)
  @Max(1_073_741_824)
  MANGO_MODEL_MAX_RESPONSE_BYTES: number = 64 * 1024 * 1024;

  /** Fallbacks the Anthropic tools use: MANGO_MODEL_BASE_URL / MANGO_MODEL_API_KEY win over them. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  ANTHROPIC_BASE_URL?: string;

  @IsOptional()
  @IsString()
  ANTHROPIC_API_KEY?: string;

  /** Operator list prices (usage.list_cost, budgets): JSON, model id → {input, output} USD per million. */
  @IsOptional()
  @IsString()
  MANGO_MODEL_PRICES?: string;

  /** The `auto` permission policy: a judgement slower than this is `ask` (docs/api-guide.md "The auto permission policy"). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  MANGO_AUTO_PERMISSION_TIMEOUT_MS: number = 15_000;

  /**
   * Model profiles over the built-in ones (docs/operator-guide.md "Model profiles"): JSON, model id (or
   * "*") → {context_window?, max_output_tokens?, thinking?, thinking_budget_tokens?, effort?, speed?};
   * validated at start (a bad one stops the orchestrator with its message).
   */
  @IsOptional()
  @IsString()
  MANGO_MODEL_PROFILES?: string;

  /**
   * Prompt size (tokens) at which completed turns are compacted into a summary, for every model; unset:
   * 80% of the model profile's context window.
   */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(100)
  MANGO_COMPACT_AT_TOKENS?: number;

  /** Turns a Session workflow run takes before it continues as new (bounds history size). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MANGO_SESSION_TURNS_PER_RUN: number = 100;

  /**
   * PostgreSQL connections of this process. Every database step (an activity's transaction, a local
   * activity, the outbox relay) holds at most one at a time and none across a model request, so the pool
   * bounds database concurrency, not how many turns run at once.
   */
  @Type(() => Number)
  @IsInt()
  @Min(2)
  @Max(200)
  MANGO_DB_POOL_SIZE: number = 10;

  /**
   * Concurrent turns per orchestrator: model steps (one per running turn) this process executes at once
   * (the Temporal worker's activity slots). Beyond it a step waits in the Temporal task queue — it queues,
   * it does not time out — until a slot here or in another orchestrator on the same queue is free.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MANGO_MAX_CONCURRENT_TURNS: number = 100;

  /**
   * Fair use for scheduled Deployment runs (docs/operator-guide.md "Fair use"; set as on apps/api): a run
   * whose Workspace already has this many Sessions with a turn under way records
   * `session_rate_limited_error`. `MANGO_FAIR_USE=off` turns the limit off.
   */
  @IsIn(['on', 'off'])
  MANGO_FAIR_USE: 'on' | 'off' = 'on';

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE: number = 1_000;

  /**
   * Session workflows this orchestrator keeps in memory between their tasks (Temporal's sticky cache,
   * `maxCachedWorkflows`). An idle Session's cached workflow costs ~2-3 MiB of RSS here; beyond the bound
   * the least recently used is evicted and replayed from its history at its next event (one replay, no
   * lost state). Unset, Temporal derives the bound from the machine's memory (~10,000 on 24 GiB), so an
   * orchestrator's memory would grow with idle Sessions.
   */
  @Type(() => Number)
  @IsInt()
  @Min(2)
  @Max(100_000)
  MANGO_MAX_CACHED_WORKFLOWS: number = 250;

  /**
   * Short database steps of the Session workflow (turn bookkeeping, result checks) run at once as local
   * activities; each holds one pool connection, so the default is the pool size less one for the outbox
   * relay. Beyond it they wait in the worker.
   */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  MANGO_MAX_CONCURRENT_DB_STEPS?: number;

  /**
   * How long a model step that ended in self-hosted or custom tool calls waits, in its own activity, for
   * their results (ADR 0019): if they all arrive in time it runs the next model step itself, skipping the
   * outbox relay, the signal and two workflow tasks per tool round trip. It holds its activity slot
   * (`MANGO_MAX_CONCURRENT_TURNS`) meanwhile; past the window the turn waits in the workflow as before.
   * 0 turns it off.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  MANGO_TOOL_RESULT_WAIT_MS: number = 1_500;
  /** Older: the webhook secrets key (32 bytes, hex or base64); joins the keyring as key `webhook-legacy`. */
  @IsOptional()
  @IsString()
  MANGO_WEBHOOK_SECRETS_KEY?: string;

  /** Non-public addresses webhooks may reach (comma-separated CIDRs, e.g. `127.0.0.0/8,::1/128`). */
  @IsOptional()
  @IsString()
  MANGO_WEBHOOK_ALLOWED_CIDRS?: string;

  /** First webhook retry step in ms (then ×6, jittered ×1–2, capped at 120 s). */
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(120_000)
  MANGO_WEBHOOK_RETRY_BASE_MS: number = 5_000;

  /** How long one delivery attempt may take: connecting, the answer's headers and its whole body. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  MANGO_WEBHOOK_TIMEOUT_MS: number = 15_000;

  /**
   * Seconds between passes that bring Deployment Schedules in Temporal back in line with PostgreSQL
   * (missing, orphaned, or paused only in PostgreSQL); 0 turns the pass off. An orphan is removed once
   * it is older than twice this interval (at least 10 s).
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(86_400)
  MANGO_DEPLOYMENT_RECONCILE_SECONDS: number = 60;

  /**
   * Seconds between passes of the Session sweeper, which restarts the workflow of a Session that is
   * `running`/`rescheduling` with no live workflow in Temporal (lost state, terminated); the workflow
   * resumes the turn from the Session log. 0 turns the sweeper off.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(86_400)
  MANGO_SESSION_SWEEP_SECONDS: number = 15;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';

  /**
   * The keyring that seals every secret at rest (Vault credentials, webhook signing secrets):
   * the same as apps/api's; comma-separated `id:base64key` entries (32-byte AES-256 keys), the first is active (docs/operator-guide.md,
   * Keyring). Or MANGO_KEYRING_FILE, not both. The older MANGO_VAULT_KEYRING and MANGO_WEBHOOK_SECRETS_KEY
   * join it. Without any, secrets cannot be stored, and the process refuses to start once any exist.
   */
  @IsOptional()
  @IsString()
  MANGO_KEYRING?: string;

  /** A file holding the keyring's entries (one per line or the same as apps/api's; comma-separated, `#` comment lines). */
  @IsOptional()
  @IsString()
  MANGO_KEYRING_FILE?: string;

  /** Older: the Vault keyring (MANGO_KEYRING's format); its keys join the keyring after MANGO_KEYRING's. */
  @IsOptional()
  @IsString()
  MANGO_VAULT_KEYRING?: string;

  /**
   * IPs / CIDR ranges of MCP servers allowed although they are loopback, private, link-local or metadata
   * addresses (refused by default), e.g. `127.0.0.1/32,::1` for a local stack.
   */
  @IsOptional()
  @IsString()
  MANGO_MCP_ALLOWED_ADDRESSES?: string;

  /** Timeout of each MCP request (tool listing or call), milliseconds. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(600_000)
  MANGO_MCP_TIMEOUT_MS: number = 60_000;

  /** The most bytes of one MCP server answer read (counted while it streams in; more fails the request). */
  @Type(() => Number)
  @IsInt()
  @Min(65_536)
  @Max(1_073_741_824)
  MANGO_MCP_MAX_RESPONSE_BYTES: number = 64 * 1024 * 1024;

  // Object storage (the same store and bucket as apps/files): optional. With it, an MCP tool's textual
  // result larger than the inline bound is kept whole as a File of the Session's Workspace; without it,
  // the model gets the bounded part and a note that the rest was not kept.

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_S3_ENDPOINT?: string;

  @IsString()
  MANGO_S3_REGION: string = 'us-east-1';

  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message: 'MANGO_S3_BUCKET must be a valid S3 bucket name',
  })
  MANGO_S3_BUCKET: string = 'mango';
}
