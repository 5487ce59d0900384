/**
 * A real client for the Anthropic Messages API over HTTP (`POST {base}/v1/messages`). The base URL and key
 * come from configuration (MANGO_MODEL_BASE_URL, MANGO_MODEL_API_KEY); tests point it at a scripted
 * server that speaks the same API.
 */
export interface ModelSettings {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
}

export type ModelContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: unknown; is_error?: boolean };

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | ModelContentBlock[];
}

export interface ModelRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: ModelMessage[];
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown> }>;
}

export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
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

export class ModelClient {
  constructor(private readonly settings: ModelSettings) {}

  /** One request; `signal` cancels it (an interrupted turn). */
  async createMessage(request: ModelRequest, options: { signal?: AbortSignal } = {}): Promise<ModelResponse> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs ?? 600_000);
    let res: Response;
    try {
      res = await fetch(new URL('/v1/messages', this.settings.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': this.settings.apiKey,
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify(request),
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new ModelRequestError(`model endpoint unreachable: ${(err as Error).message}`, null, true);
    }
    const text = await res.text();
    if (!res.ok) {
      const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
      throw new ModelRequestError(
        `model endpoint answered ${res.status}: ${text.slice(0, 500)}`,
        res.status,
        retryable,
      );
    }
    return JSON.parse(text) as ModelResponse;
  }
}
