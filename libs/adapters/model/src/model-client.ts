import Anthropic, { APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { MessageStreamParams } from '@anthropic-ai/sdk/resources/messages/messages';
import { boundedFetch, FetchLike, outboundLimitIn } from '@mango/platform-egress';

/** Defaults of the bounds on one model request (docs/operator-guide.md "Model endpoint"). */
export const MODEL_REQUEST_BOUNDS = {
  timeoutMs: 600_000,
  idleTimeoutMs: 120_000,
  maxResponseBytes: 64 * 1024 * 1024,
} as const;

/**
 * A real client for the Anthropic Messages API over HTTP (`POST {base}/v1/messages`). The base URL and key
 * come from configuration (MANGO_MODEL_BASE_URL, MANGO_MODEL_API_KEY); tests point it at a scripted
 * server that speaks the same API.
 */
export interface ModelSettings {
  baseUrl: string;
  apiKey: string;
  /** The whole request: the headers and the entire streamed reply (`MANGO_MODEL_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** The longest silence before the headers or between two chunks of the reply (`MANGO_MODEL_IDLE_TIMEOUT_MS`). */
  idleTimeoutMs?: number;
  /** The most bytes of one reply read, counted while it streams in (`MANGO_MODEL_MAX_RESPONSE_BYTES`). */
  maxResponseBytes?: number;
}

export type ModelContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: unknown; is_error?: boolean }
  // Web tools the endpoint runs itself (server tools), sent back in the transcript as they came.
  | { type: 'server_tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'web_search_tool_result' | 'web_fetch_tool_result'; tool_use_id: string; content: unknown };

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | ModelContentBlock[];
}

export interface ModelRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: ModelMessage[];
  /** Client tools, and server tools (`{type, name, …}`: the endpoint's web tools). */
  tools?: Array<
    | { name: string; description?: string; input_schema: Record<string, unknown> }
    | ({ type: string; name: string } & Record<string, unknown>)
  >;
  /** Extended thinking: with a token budget, or adaptive (sent only where the model profile supports it). */
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' };
  /** The Agent's `model.effort` (where supported). */
  output_config?: { effort: string };
  /** Fast mode (where supported). */
  speed?: 'fast';
}

export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** The server tools (web search, web fetch) the endpoint ran for this response. */
  server_tool_use?: ServerToolUsage;
}

export interface ServerToolUsage {
  web_search_requests?: number;
  web_fetch_requests?: number;
}

export interface ModelResponse {
  id: string;
  content: ModelContentBlock[];
  stop_reason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | string;
  usage: ModelUsage;
}

/** Thrown for non-2xx answers; `retryable` for overload, rate limits, timeouts and 5xx. */
export class ModelRequestError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ModelRequestError';
  }
}

/** A text delta of the response being generated: `index` counts the text blocks of the reply. */
export type TextDeltaListener = (index: number, text: string) => void;

/** The reply started a thinking (or redacted thinking) block. */
export type ThinkingListener = () => void;

/**
 * The Messages API through the official SDK, always streaming (so previews can be relayed while the
 * reply is generated) and accumulated into one response. Retries are the caller's (the Session workflow
 * retries with backoff and records each failure), so the SDK's own are off.
 */
export class ModelClient {
  private readonly client: Anthropic;

  constructor(settings: ModelSettings) {
    const timeoutMs = settings.timeoutMs ?? MODEL_REQUEST_BOUNDS.timeoutMs;
    this.client = new Anthropic({
      baseURL: settings.baseUrl,
      apiKey: settings.apiKey,
      maxRetries: 0,
      timeout: timeoutMs,
      // The SDK's own timeout stops at the headers: the bounded fetch covers the streamed body too, cuts a
      // stalled stream at the idle bound and counts the reply's bytes against the cap.
      fetch: boundedFetch(globalThis.fetch as FetchLike, {
        deadlineMs: timeoutMs,
        idleMs: settings.idleTimeoutMs ?? MODEL_REQUEST_BOUNDS.idleTimeoutMs,
        maxBytes: settings.maxResponseBytes ?? MODEL_REQUEST_BOUNDS.maxResponseBytes,
      }),
    });
  }

  /** One request; `signal` cancels it (an interrupted turn); `onText` receives text deltas as they arrive. */
  async createMessage(
    request: ModelRequest,
    options: {
      signal?: AbortSignal;
      onText?: TextDeltaListener;
      onThinking?: ThinkingListener;
      betas?: string[];
    } = {},
  ): Promise<ModelResponse> {
    try {
      const stream = this.client.messages.stream(request as unknown as MessageStreamParams, {
        signal: options.signal,
        ...(options.betas?.length ? { headers: { 'anthropic-beta': options.betas.join(',') } } : {}),
      });
      if (options.onText) {
        const onText = options.onText;
        let textBlocks = -1;
        stream.on('streamEvent', (event) => {
          if (event.type === 'content_block_start' && event.content_block.type === 'text') textBlocks += 1;
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
            onText(Math.max(textBlocks, 0), event.delta.text);
        });
      }
      if (options.onThinking) {
        const onThinking = options.onThinking;
        stream.on('streamEvent', (event) => {
          if (
            event.type === 'content_block_start' &&
            (event.content_block.type === 'thinking' || event.content_block.type === 'redacted_thinking')
          )
            onThinking();
        });
      }
      const message = await stream.finalMessage();
      return {
        id: message.id,
        content: message.content as unknown as ModelContentBlock[],
        stop_reason: message.stop_reason ?? 'end_turn',
        usage: {
          input_tokens: message.usage.input_tokens,
          output_tokens: message.usage.output_tokens,
          cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
          ...serverToolUsage(message.usage.server_tool_use),
        },
      };
    } catch (err) {
      if (err instanceof APIUserAbortError || options.signal?.aborted) throw err;
      // A bound (deadline, stalled stream, reply too large): retryable, like an unreachable endpoint.
      const limit = outboundLimitIn(err);
      if (limit) throw new ModelRequestError(`model endpoint: ${limit.message}`, null, true);
      if (err instanceof APIError && typeof err.status === 'number') {
        const status = err.status;
        const retryable = status === 408 || status === 429 || status >= 500;
        throw new ModelRequestError(`model endpoint answered ${status}`, status, retryable);
      }
      throw new ModelRequestError(`model endpoint unreachable: ${(err as Error).message}`, null, true);
    }
  }
}

/** The endpoint's `usage.server_tool_use` counts (absent when it ran none or reports none). */
function serverToolUsage(raw: unknown): { server_tool_use?: ServerToolUsage } {
  if (!raw || typeof raw !== 'object') return {};
  const r = raw as Record<string, unknown>;
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
  const out: ServerToolUsage = {};
  const search = count(r.web_search_requests);
  const fetch = count(r.web_fetch_requests);
  if (search) out.web_search_requests = search;
  if (fetch) out.web_fetch_requests = fetch;
  return Object.keys(out).length ? { server_tool_use: out } : {};
}
