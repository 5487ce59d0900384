/**
 * Hand-written types mirroring the component schemas of `openapi.yaml` (Mango `/v1`, milestones 1–2).
 *
 * Response types describe what the server returns (every `required` property is present; nullable
 * properties are `T | null`). Request types (`…Params`) describe what the server accepts (optional
 * properties may be omitted; where the schema allows `null`, it is accepted and means "clear"/"default").
 */

// ---------------------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------------------

/** RFC 3339 timestamp in UTC with milliseconds, e.g. `2026-01-02T03:04:05.678Z`. */
export type Timestamp = string;
/** `req_` + 26-character ULID. */
export type RequestId = string;
/** `agent_` + 26-character ULID. */
export type AgentId = string;
/** `env_` + 26-character ULID. */
export type EnvironmentId = string;
/** `work_` + 26-character ULID. */
export type WorkId = string;
/** `sesn_` + 26-character ULID. */
export type SessionId = string;
/** `skill_` + 26-character ULID. */
export type SkillId = string;
/** Cursor for the next page, or null on the last page. */
export type NextPage = string | null;

/** Up to 16 string key/value pairs; keys 1–64 characters, values ≤ 512 characters. */
export type Metadata = Record<string, string>;
/** A string upserts the key, `null` deletes it (for Environments `""` also deletes). */
export type MetadataPatch = Record<string, string | null>;

// ---------------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------------

/** One page of a list: pass `next_page` back as `page` until it is `null`. */
export interface Page<T> {
  data: T[];
  next_page: NextPage;
}

/** Query parameters shared by every list route. */
export interface PageParams {
  /** Maximum number of items per page (1–1000, server default 20). */
  limit?: number;
  /** Opaque cursor from a previous response's `next_page`. */
  page?: string;
}

/**
 * A `created_at` range filter, sent as `created_at[gte]=…` / `created_at[lte]=…`. Dates are sent as
 * `toISOString()`; strings must be RFC 3339 timestamps.
 */
export interface CreatedAtFilter {
  gte?: string | Date;
  lte?: string | Date;
}

/** A `created_at` range filter with strict bounds too (`created_at[gt]`, `created_at[lt]`). */
export interface CreatedAtRangeFilter extends CreatedAtFilter {
  gt?: string | Date;
  lt?: string | Date;
}

/** `asc` (oldest first) or `desc` (newest first). */
export type SortOrder = 'asc' | 'desc';

// ---------------------------------------------------------------------------------------------------
// Errors and health
// ---------------------------------------------------------------------------------------------------

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'heartbeat_precondition_failed'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error';

/** Error envelope returned by every failing `/v1` request. */
export interface ErrorEnvelope {
  type: 'error';
  error: {
    type: ErrorType;
    message: string;
    details?: Record<string, unknown>;
  };
  request_id: RequestId;
}

/** The Work's current lease as seen by the server when a heartbeat precondition fails. */
export interface WorkLeaseState {
  state: WorkState;
  /** TTL in seconds of the Work's current lease (0 when it has none). */
  ttl_seconds: number;
  last_heartbeat: Timestamp | null;
  lease_extended: false;
}

/** `error.details` of a `412 heartbeat_precondition_failed`. */
export interface HeartbeatPreconditionFailedDetails {
  error_code?: 'heartbeat_precondition_failed';
  current_state: WorkLeaseState;
}

export interface HealthStatus {
  status: 'ok';
}

export interface ReadinessOk {
  status: 'ok';
  checks: {
    database: 'ok';
    /** apps/files only. */
    object_store?: 'ok';
  };
}

export interface ReadinessUnavailable {
  status: 'unavailable';
  checks: {
    database: 'ok' | 'unreachable' | 'read_only' | 'timeout';
    /** apps/files only. */
    object_store?: 'ok' | 'unreachable' | 'timeout';
  };
}

export type Readiness = ReadinessOk | ReadinessUnavailable;

// ---------------------------------------------------------------------------------------------------
// Agent building blocks
// ---------------------------------------------------------------------------------------------------

export type PermissionPolicyType = 'always_allow' | 'always_ask' | 'deny';

/** Applies to built-in and MCP tools, never to custom tools. */
export interface PermissionPolicy {
  type: PermissionPolicyType;
}

/** The only policy a web tool accepts. */
export interface AlwaysAllowPolicy {
  type: 'always_allow';
}

/** Model identifier understood by the configured model endpoint (1–256 characters). */
export type ModelId = string;

export type EffortLevel = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export type ModelSpeed = 'standard' | 'fast';

/** Resolved model configuration (always an object in responses). */
export interface ModelConfig {
  id: ModelId;
  effort?: { type: EffortLevel };
  inference_geo?: string;
  speed?: ModelSpeed;
}

export interface ModelConfigParams {
  id: ModelId;
  /** A level name or `{type: <level>}`; `null` selects the model's default. */
  effort?: EffortLevel | { type: EffortLevel } | null;
  inference_geo?: string | null;
  speed?: ModelSpeed | null;
}

/** A bare model id or a model configuration object. */
export type ModelParam = ModelId | ModelConfigParams;

export type BuiltinToolName =
  'bash' | 'read' | 'write' | 'edit' | 'glob' | 'grep' | 'web_fetch' | 'web_search';

export type SandboxToolName = 'bash' | 'read' | 'write' | 'edit' | 'glob' | 'grep';

/** 1–64 bare host names (web_search also allows a path suffix). */
export type DomainList = string[];

export interface UserLocation {
  type: 'approximate';
  city?: string | null;
  region?: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string | null;
  /** IANA time zone name. */
  timezone?: string | null;
}

export interface ToolDefaultConfig {
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

/** Resolved config of one of the six sandbox tools (`type` equals `name`). */
export interface SandboxToolConfig {
  name: SandboxToolName;
  type: SandboxToolName;
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

/** Resolved `web_fetch` config. Domain lists are present only when configured (never both). */
export interface WebFetchToolConfig {
  name: 'web_fetch';
  type: 'web_fetch';
  enabled: boolean;
  permission_policy: PermissionPolicy;
  allowed_domains?: DomainList;
  blocked_domains?: DomainList;
  max_content_tokens?: number | null;
}

/** Resolved `web_search` config. Optional keys are present only when configured. */
export interface WebSearchToolConfig {
  name: 'web_search';
  type: 'web_search';
  enabled: boolean;
  permission_policy: PermissionPolicy;
  allowed_domains?: DomainList;
  blocked_domains?: DomainList;
  user_location?: UserLocation | null;
}

export type AgentToolConfig = SandboxToolConfig | WebFetchToolConfig | WebSearchToolConfig;

/**
 * Resolved built-in toolset. `configs` holds one entry for each of the eight tools (bash, read, write,
 * edit, glob, grep, web_fetch, web_search, in that order) with inherited values resolved.
 */
export interface AgentToolset {
  type: 'agent_toolset_20260401';
  default_config: ToolDefaultConfig;
  configs: AgentToolConfig[];
}

export interface McpToolConfig {
  name: string;
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

/** Resolved MCP toolset; `configs` lists the tools configured explicitly. */
export interface McpToolset {
  type: 'mcp_toolset';
  mcp_server_name: string;
  default_config: ToolDefaultConfig;
  configs: McpToolConfig[];
}

/** JSON Schema of the tool input; must be an object schema. Stored and returned as given. */
export interface CustomToolInputSchema {
  type: 'object';
  properties?: Record<string, unknown> | null;
  required?: string[] | null;
  [keyword: string]: unknown;
}

/** A tool executed by the API client (`agent.custom_tool_use` → `user.custom_tool_result`). */
export interface CustomTool {
  type: 'custom';
  /** `^[A-Za-z0-9_-]{1,128}$` */
  name: string;
  description: string;
  input_schema: CustomToolInputSchema;
}

export type AgentTool = AgentToolset | McpToolset | CustomTool;

export interface ToolDefaultConfigParams {
  /** Default true. */
  enabled?: boolean | null;
  /** Default `always_allow`. */
  permission_policy?: PermissionPolicy | null;
}

export interface SandboxToolConfigParams {
  name: SandboxToolName;
  /** Must equal `name` when given. */
  type?: SandboxToolName;
  enabled?: boolean | null;
  permission_policy?: PermissionPolicy | null;
}

export interface WebFetchToolConfigParams {
  name: 'web_fetch';
  type?: 'web_fetch';
  enabled?: boolean | null;
  permission_policy?: AlwaysAllowPolicy | null;
  allowed_domains?: DomainList | null;
  blocked_domains?: DomainList | null;
  max_content_tokens?: number | null;
}

export interface WebSearchToolConfigParams {
  name: 'web_search';
  type?: 'web_search';
  enabled?: boolean | null;
  permission_policy?: AlwaysAllowPolicy | null;
  allowed_domains?: DomainList | null;
  blocked_domains?: DomainList | null;
  user_location?: UserLocation | null;
}

export type AgentToolConfigParams =
  SandboxToolConfigParams | WebFetchToolConfigParams | WebSearchToolConfigParams;

/**
 * Built-in toolset. Tools not listed in `configs` inherit `default_config`. At most one config per tool
 * name; `allowed_domains` and `blocked_domains` are mutually exclusive.
 */
export interface AgentToolsetParams {
  type: 'agent_toolset_20260401';
  default_config?: ToolDefaultConfigParams | null;
  configs?: AgentToolConfigParams[] | null;
}

export interface McpToolConfigParams {
  name: string;
  enabled?: boolean | null;
  permission_policy?: PermissionPolicy | null;
}

export interface McpToolsetParams {
  type: 'mcp_toolset';
  mcp_server_name: string;
  default_config?: ToolDefaultConfigParams | null;
  configs?: McpToolConfigParams[] | null;
}

export type AgentToolParams = AgentToolsetParams | McpToolsetParams | CustomTool;

/** A remote MCP server reachable over Streamable HTTP. No credentials are ever stored here. */
export interface McpServer {
  type: 'url';
  name: string;
  url: string;
}

/** A custom Skill pinned by the Agent. */
export interface SkillPin {
  type: 'custom';
  skill_id: SkillId;
  /** A Skill version, or `latest`. */
  version: string;
}

export interface SkillParams {
  type: 'custom';
  skill_id: string;
  /** A Skill version; omitted or null means `latest`. */
  version?: string | null;
}

export interface AgentReference {
  type: 'agent';
  id: AgentId;
  version: number;
}

export interface Advisor {
  type: 'advisor';
  model: ModelId;
}

export interface RosterSelf {
  type: 'self';
}

export type RosterEntry = AgentReference | RosterSelf | Advisor;

/** Resolved coordinator roster (1–20 entries). */
export interface Multiagent {
  type: 'coordinator';
  agents: RosterEntry[];
}

/**
 * An Agent id (latest version pinned at save time), `{type:"agent", id, version?}`, `{type:"self"}`,
 * or `{type:"advisor", model}`.
 */
export type RosterEntryParams =
  string | { type: 'agent'; id: string; version?: number | null } | RosterSelf | Advisor;

export interface MultiagentParams {
  type: 'coordinator';
  agents: RosterEntryParams[];
}

// ---------------------------------------------------------------------------------------------------
// Agent
// ---------------------------------------------------------------------------------------------------

/** One immutable version of an Agent configuration. */
export interface Agent {
  id: AgentId;
  type: 'agent';
  name: string;
  description: string | null;
  system: string | null;
  model: ModelConfig;
  tools: AgentTool[];
  mcp_servers: McpServer[];
  skills: SkillPin[];
  multiagent: Multiagent | null;
  metadata: Metadata;
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

export interface AgentCreateParams {
  name: string;
  model: ModelParam;
  description?: string | null;
  system?: string | null;
  tools?: AgentToolParams[];
  mcp_servers?: McpServer[];
  skills?: SkillParams[];
  multiagent?: MultiagentParams | null;
  metadata?: Metadata;
}

/**
 * Every field optional. Omitted fields are preserved; arrays are replaced whole and `null`/`[]` clears
 * them; `description`, `system` and `multiagent` are cleared by `null`; `metadata` is a patch.
 */
export interface AgentUpdateParams {
  /** Optimistic concurrency: must equal the current version (409 otherwise). */
  version?: number;
  name?: string;
  model?: ModelParam;
  description?: string | null;
  system?: string | null;
  tools?: AgentToolParams[] | null;
  mcp_servers?: McpServer[] | null;
  skills?: SkillParams[] | null;
  multiagent?: MultiagentParams | null;
  metadata?: MetadataPatch | null;
}

export interface AgentRetrieveParams {
  /** Version to return (≥ 1). Omit for the latest version. */
  version?: number;
}

export interface AgentListParams extends PageParams {
  created_at?: CreatedAtFilter;
  /** Include archived Agents (default false). */
  include_archived?: boolean;
}

export type AgentVersionListParams = PageParams;

export type AgentList = Page<Agent>;

// ---------------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------------

/** The only Environment config Mango supports; `networking` absent or null: no sandbox egress. */
export interface SelfHostedConfig {
  type: 'self_hosted';
  networking?: UnrestrictedNetworking | LimitedNetworking | null;
}

/** Every public host (honoured only where the operator allows it: MANGO_WORKER_EGRESS_UNRESTRICTED). */
export interface UnrestrictedNetworking {
  type: 'unrestricted';
}

/** Only the listed hosts (names, `*.` wildcards, IPs, optional `:port`; without a port: 80 and 443). */
export interface LimitedNetworking {
  type: 'limited';
  allowed_hosts?: string[];
  /** The public package registries (docs/api-guide.md "Sandbox egress"), port 443. */
  allow_package_managers?: boolean;
  /** The Session's Agent's MCP servers. */
  allow_mcp_servers?: boolean;
}

export type EnvironmentScope = 'organization' | 'account';

export interface Environment {
  id: EnvironmentId;
  type: 'environment';
  name: string;
  description: string | null;
  config: SelfHostedConfig;
  scope: EnvironmentScope;
  metadata: Metadata;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

export interface EnvironmentCreateParams {
  name: string;
  description?: string | null;
  /** Defaults to `{type:"self_hosted"}`. */
  config?: SelfHostedConfig | null;
  metadata?: Metadata;
  /** Defaults to `organization`. */
  scope?: EnvironmentScope;
}

export interface EnvironmentUpdateParams {
  name?: string;
  /** `null` clears; `""` is stored as `""`. */
  description?: string | null;
  config?: SelfHostedConfig;
  /** Patch; `null` or `""` deletes a key. */
  metadata?: MetadataPatch;
  scope?: EnvironmentScope;
}

export interface EnvironmentListParams extends PageParams {
  /** Include archived Environments (default false). */
  include_archived?: boolean;
}

export type EnvironmentList = Page<Environment>;

/** Tombstone returned by `DELETE /v1/environments/{id}`. */
export interface EnvironmentDeleted {
  id: EnvironmentId;
  type: 'environment_deleted';
}

// ---------------------------------------------------------------------------------------------------
// Environment Work
// ---------------------------------------------------------------------------------------------------

/**
 * `queued` (waiting or polled but unacknowledged) → `starting` (Ack) → `active` (first heartbeat) →
 * `stopping` (graceful Stop) → `stopped`.
 */
export type WorkState = 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';

export interface SessionWorkData {
  type: 'session';
  id: SessionId;
}

export interface HealthcheckWorkData {
  type: 'healthcheck';
}

export type WorkData = SessionWorkData | HealthcheckWorkData;

export type WorkResultStatus = 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

/** Durable, immutable result of a healthcheck. */
export interface WorkResult {
  status: WorkResultStatus;
  message: string;
}

/**
 * A Work item. `secret` is null except in a Poll response. Session Work has `expires_at` and `result`
 * null; a healthcheck has `expires_at` = `created_at` + 120 s and a `result` once finished.
 */
export interface Work {
  id: WorkId;
  type: 'work';
  environment_id: EnvironmentId;
  data: WorkData;
  state: WorkState;
  secret: string | null;
  metadata: Metadata;
  result: WorkResult | null;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  acknowledged_at: Timestamp | null;
  started_at: Timestamp | null;
  latest_heartbeat_at: Timestamp | null;
  stop_requested_at: Timestamp | null;
  stopped_at: Timestamp | null;
}

/** A Work item as returned by every route except Poll — `secret` is always null. */
export interface RedactedWork extends Work {
  secret: null;
}

/** A Work item as returned by Poll — state `queued`, `secret` populated (see {@link WorkSecret}). */
export interface PolledWork extends Work {
  state: 'queued';
  /** URL-safe base64 of the JSON {@link WorkSecret}; decode with `decodeWorkSecret`. */
  secret: string;
}

/** Decoded form of a polled Work `secret`. */
export interface WorkSecret {
  /** The Work token; send it as the bearer credential of Heartbeat, Fail, Stop and Result. */
  sessions_token: string;
  /** Base URL the worker should call. */
  api_base_url: string;
}

export type WorkList = Page<RedactedWork>;

export interface WorkCreateParams {
  data: HealthcheckWorkData;
}

export interface WorkUpdateParams {
  metadata: MetadataPatch;
}

export type WorkListParams = PageParams;

export interface WorkPollParams {
  /** How long to wait for an item when none is available (0–30000 ms; server default 0). */
  block_ms?: number;
  /** A polled but unacknowledged claim older than this may be claimed again (server default 5000). */
  reclaim_older_than_ms?: number;
  /** Identifies the polling worker for queue statistics (1–128 characters; not a credential). */
  worker_id?: string;
}

/** The `expected_last_heartbeat` of a worker's first heartbeat after Ack. */
export const NO_HEARTBEAT = 'NO_HEARTBEAT' as const;

export interface WorkHeartbeatParams {
  /** {@link NO_HEARTBEAT} for the first heartbeat, then the previous response's `last_heartbeat`, verbatim. */
  expected_last_heartbeat: typeof NO_HEARTBEAT | Timestamp;
  /** Requested lease length in seconds (1–300; server default 60). */
  desired_ttl_seconds?: number;
}

export interface WorkResultParams {
  status: 'succeeded' | 'failed';
  message: string;
}

export interface WorkFailParams {
  /** Why the input is permanently unusable (shown in the Session's error). */
  message: string;
}

export interface WorkStopParams {
  /** true records `stopped` immediately; false/absent stops gracefully. */
  force?: boolean;
}

export interface WorkHeartbeat {
  type: 'work_heartbeat';
  /** Timestamp of the recorded heartbeat; echo it verbatim as the next `expected_last_heartbeat`. */
  last_heartbeat: Timestamp;
  /** true when the lease was renewed; false when the Work is `stopping`. */
  lease_extended: boolean;
  /** `active`, or `stopping` when the worker must cancel. */
  state: 'active' | 'stopping';
  /** Lease TTL in seconds (0–300). */
  ttl_seconds: number;
}

export interface WorkQueueStats {
  type: 'work_queue_stats';
  /** Items waiting in the queue that have not been polled. */
  depth: number;
  /** Items polled but not yet acknowledged. */
  pending: number;
  /** `created_at` of the oldest queued item, or null when the queue is empty. */
  oldest_queued_at: Timestamp | null;
  /** Distinct worker ids seen polling in the last 30 seconds. */
  workers_polling: number;
}

// ---------------------------------------------------------------------------------------------------
// Session
// ---------------------------------------------------------------------------------------------------

export type SessionStatus = 'idle' | 'running' | 'rescheduling' | 'terminated';

/** The frozen Agent a Session runs (`id`/`version` name the base Agent; overrides applied). */
export interface SessionAgent {
  id: AgentId;
  type: 'agent';
  version: number;
  name: string;
  description: string | null;
  system: string | null;
  model: ModelConfig;
  tools: AgentTool[];
  mcp_servers: McpServer[];
  skills: SkillPin[];
  multiagent: Multiagent | null;
}

export interface MonetaryAmount {
  /** Integer minor units, e.g. `"2500"` = $25.00. */
  amount: string;
  currency: 'USD';
}

export interface Budget {
  type: 'limit';
  max_list_cost: MonetaryAmount;
}

/** Usage counters; values are integers, objects or null. */
export type SessionUsage = Record<string, number | Record<string, unknown> | null>;

/** A Memory Store attached to a Session, as the Session shows it. */
export interface SessionMemoryStoreResource {
  type: 'memory_store';
  memory_store_id: string;
  access: 'read_write' | 'read_only';
  instructions: string | null;
  /** Snapshots of the Store's name and description at Session creation. */
  name: string;
  description: string;
  /** `/mnt/memory/<slug>` in the sandbox. */
  mount_path: string;
}

export interface SessionMemoryStoreResourceParams {
  type: 'memory_store';
  memory_store_id: string;
  /** Default `read_write`. */
  access?: 'read_write' | 'read_only' | null;
  instructions?: string | null;
}

export interface Session {
  id: SessionId;
  type: 'session';
  title: string | null;
  status: SessionStatus;
  agent: SessionAgent;
  environment_id: EnvironmentId;
  /** Memory Store attachments (create-time only). */
  resources: SessionMemoryStoreResource[];
  /** Vaults attached at creation, in request order. */
  vault_ids: string[];
  metadata: Metadata;
  budget: Budget | null;
  usage: SessionUsage;
  stats: Record<string, unknown>;
  outcome_evaluations: unknown[];
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

/** A page of Sessions; `prev_page` is the cursor of the previous page, or null on the first. */
export interface SessionList extends Page<Session> {
  prev_page: NextPage;
}

/** Tombstone returned by `DELETE /v1/sessions/{id}`. */
export interface SessionDeleted {
  id: SessionId;
  type: 'session_deleted';
}

/** A specific Agent version (latest when `version` is omitted). */
export interface AgentSelection {
  type: 'agent';
  id: AgentId;
  version?: number;
}

/** A specific Agent version with per-Session overrides. */
export interface AgentWithOverrides {
  type: 'agent_with_overrides';
  id: AgentId;
  version?: number;
  model?: ModelParam;
  system?: string | null;
  tools?: AgentToolParams[];
  mcp_servers?: McpServer[];
  skills?: SkillParams[];
}

/** An Agent id (latest version), `{type:"agent", id, version?}` or `{type:"agent_with_overrides", …}`. */
export type AgentSelectionParams = AgentId | AgentSelection | AgentWithOverrides;

export interface TextBlock {
  type: 'text';
  /** At least one character. */
  text: string;
}

export interface TextDocumentBlock {
  type: 'document';
  source: { type: 'text'; media_type: 'text/plain'; data: string };
  title?: string | null;
  context?: string | null;
}

export type UserContentBlock = TextBlock | TextDocumentBlock;

export interface UserMessageParams {
  type: 'user.message';
  /** At least one block. */
  content: UserContentBlock[];
}

export interface UserInterruptParams {
  type: 'user.interrupt';
  session_thread_id?: string;
}

/** An event a client may send: `user.message` or `user.interrupt`. */
export type SessionEventParams = UserMessageParams | UserInterruptParams;

export interface SessionCreateParams {
  agent: AgentSelectionParams;
  environment_id: EnvironmentId;
  title?: string | null;
  /** Up to 50 `user.message` events; non-empty starts the Session `running`. */
  initial_events?: UserMessageParams[];
  budget?: Budget | null;
  metadata?: Metadata;
  /** Memory Stores to attach (≤ 8; self-hosted Environments accept only `memory_store`). */
  resources?: SessionMemoryStoreResourceParams[];
  /** Vaults whose credentials authenticate remote MCP calls (≤ 20 distinct `vlt_` ids; create only). */
  vault_ids?: string[] | null;
}

/** `budget` can be changed or removed (`null`) but not added after creation; `metadata` is a patch. */
export interface SessionUpdateParams {
  title?: string | null;
  metadata?: MetadataPatch;
  budget?: Budget | null;
}

export interface SessionListParams extends PageParams {
  /** Default `desc` (newest first). */
  order?: SortOrder;
  agent_id?: AgentId;
  agent_version?: number;
  /** Sent as `statuses[]=…`. */
  statuses?: SessionStatus[];
  /** Include archived Sessions (default false). */
  include_archived?: boolean;
  created_at?: CreatedAtRangeFilter;
}

// ---------------------------------------------------------------------------------------------------
// Session events
// ---------------------------------------------------------------------------------------------------

/** `sevt_` + 26-character ULID. */
export type SessionEventId = string;

interface SessionEventBase {
  id: SessionEventId;
  processed_at: Timestamp | null;
}

export interface SessionStatusRunningEvent extends SessionEventBase {
  type: 'session.status_running';
}

export interface SessionStatusIdleEvent extends SessionEventBase {
  type: 'session.status_idle';
  stop_reason: {
    type: 'end_turn' | 'requires_action' | 'retries_exhausted' | 'budget_reached';
    event_ids?: string[];
  };
}

export interface SpanModelRequestStartEvent extends SessionEventBase {
  type: 'span.model_request_start';
}

export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  speed?: string;
}

export interface SpanModelRequestEndEvent extends SessionEventBase {
  type: 'span.model_request_end';
  model_request_start_id: string;
  is_error: boolean | null;
  model_usage: ModelUsage;
}

export interface AgentMessageEvent extends SessionEventBase {
  type: 'agent.message';
  content: TextBlock[];
}

export interface UserMessageEvent extends SessionEventBase {
  type: 'user.message';
  content: UserContentBlock[];
}

export interface UserInterruptEvent extends SessionEventBase {
  type: 'user.interrupt';
  session_thread_id?: string;
}

/** Only the fields that changed are present. */
export interface SessionUpdatedEvent extends SessionEventBase {
  type: 'session.updated';
  title?: string | null;
  metadata?: Metadata;
  budget?: Budget | null;
}

/** The last event of a Session; open streams end after it. */
export interface SessionDeletedEvent extends SessionEventBase {
  type: 'session.deleted';
}

/** A persisted Session event, discriminated by `type`. */
export type SessionEvent =
  | SessionStatusRunningEvent
  | SessionStatusIdleEvent
  | SpanModelRequestStartEvent
  | SpanModelRequestEndEvent
  | AgentMessageEvent
  | UserMessageEvent
  | UserInterruptEvent
  | SessionUpdatedEvent
  | SessionDeletedEvent;

export type SessionEventType = SessionEvent['type'];

export interface SessionEventsSendParams {
  /** 1–100 events. */
  events: SessionEventParams[];
}

export interface SessionEventsSendResponse {
  data: SessionEvent[];
}

export interface SessionEventListParams extends PageParams {
  /** Default `asc` (sequence order). */
  order?: SortOrder;
  /** Sent as `types[]=…`. */
  types?: SessionEventType[];
  created_at?: CreatedAtRangeFilter;
}

export type SessionEventList = Page<SessionEvent>;

export interface SessionEventStreamParams {
  /** Resume after this event sequence number (sent as `Last-Event-ID`); omit to start at the beginning. */
  lastEventId?: string;
  /** Ends the stream; iteration rejects with `RequestAbortedError`. */
  signal?: AbortSignal;
}

/** One streamed event with its SSE `id` (the event's sequence number, usable as `lastEventId`). */
export interface SessionStreamEvent {
  id: string;
  event: SessionEvent;
}
