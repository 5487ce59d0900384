import {
  ConnectionError,
  ConnectionTimeoutError,
  errorFromResponse,
  MangoError,
  RequestAbortedError,
} from './errors';

export const SDK_VERSION = '0.1.0';

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 60_000;
/** First retry waits about this long; each further retry doubles it. */
export const INITIAL_RETRY_DELAY_MS = 500;
export const MAX_RETRY_DELAY_MS = 8_000;
/** A server-sent `retry-after` longer than this is ignored in favour of the computed backoff. */
const MAX_RETRY_AFTER_MS = 60_000;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface MangoClientOptions {
  /** Server origin (and optional path prefix) without `/v1`, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** Bearer credential: Workspace API key (`mango_ak_…`), Environment key (`mango_ek_…`) or Work token (`mango_wt_…`). */
  apiKey: string;
  /** fetch implementation; defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** How many times a retryable failure (connection error, timeout, 408, 429, 5xx) is retried. Default 2. */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds. Default 60000. */
  timeoutMs?: number;
  /** Extra headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /**
   * Called with every successful (2xx) response's facts: its `request-id`, the `Idempotency-Key` the call
   * sent and whether the server replayed an earlier response to that key (`idempotent-replayed`).
   */
  onResponse?: (info: ResponseInfo) => void;
}

/** What {@link MangoClientOptions.onResponse} is told about a successful response. */
export interface ResponseInfo {
  method: HttpMethod;
  /** The request URL (base URL, path and query). */
  url: string;
  status: number;
  /** The response's `request-id`; on a replay, the id of the request that ran. */
  requestId: string | undefined;
  /** The `Idempotency-Key` this call sent (every POST sends one). */
  idempotencyKey: string | undefined;
  /** Whether the server answered with the stored response of an earlier request with the same key. */
  replayed: boolean;
}

/** Per-call overrides accepted as the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call (no further retries); the call rejects with `RequestAbortedError`. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  /** Extra headers for this call (cannot override `authorization`). */
  headers?: Record<string, string>;
  /**
   * The `Idempotency-Key` of this call (POST only; docs/api-guide.md, "Idempotent requests"). Default: a
   * fresh UUID per call, sent unchanged by every retry of it. Pass your own to make a repeat of the call
   * from elsewhere (another process, after a crash) safe too.
   */
  idempotencyKey?: string;
}

/** The request header that makes a POST safe to send again. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestSpec {
  method: HttpMethod;
  path: string;
  query?: object;
  /** JSON body; `undefined` sends no body at all. */
  body?: unknown;
  /** A `multipart/form-data` body instead of JSON (fetch sets the boundary). */
  form?: FormData;
  options?: RequestOptions;
  /** Lower bound for this call's timeout (long polls need more than the default). */
  minTimeoutMs?: number;
  /** Non-2xx statuses whose body is returned instead of thrown (readiness 503). */
  acceptStatuses?: readonly number[];
}

/** A long-lived `GET` whose body the caller reads (Server-Sent Events). */
export interface StreamSpec {
  path: string;
  query?: object;
  /** Extra headers for this connection (e.g. `last-event-id`). */
  headers?: Record<string, string>;
  options?: RequestOptions;
}

/** An open 2xx streaming response. */
export interface OpenStream {
  body: ReadableStream<Uint8Array>;
  /** Restarts the idle timer; call after every received chunk. */
  touch(): void;
  /** Aborts the connection and releases its timer and listener (idempotent). */
  close(): void;
  /** Whether the idle timer cut the connection. */
  readonly timedOut: boolean;
}

/** The outcome of {@link HttpClient.openStream}: an open stream, or a failure the caller may retry. */
export type StreamOutcome =
  | { kind: 'open'; stream: OpenStream }
  | { kind: 'error'; error: MangoError; retryable: boolean; headers?: Headers };

/** Resolved, immutable client configuration shared by the resource groups. */
export interface ClientConfig {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  maxRetries: number;
  timeoutMs: number;
  defaultHeaders: Record<string, string>;
  onResponse?: (info: ResponseInfo) => void;
}

export function resolveConfig(opts: MangoClientOptions): ClientConfig {
  if (opts === null || typeof opts !== 'object') throw new TypeError('MangoClient: options are required');
  if (typeof opts.baseUrl !== 'string' || opts.baseUrl.trim() === '') {
    throw new TypeError('MangoClient: baseUrl is required');
  }
  let parsed: URL;
  try {
    parsed = new URL(opts.baseUrl);
  } catch {
    throw new TypeError(`MangoClient: baseUrl is not a valid URL: ${opts.baseUrl}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError('MangoClient: baseUrl must be an http:// or https:// URL');
  }
  if (typeof opts.apiKey !== 'string' || opts.apiKey.trim() === '') {
    throw new TypeError('MangoClient: apiKey is required');
  }
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError('MangoClient: maxRetries must be a non-negative integer');
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError('MangoClient: timeoutMs must be a positive number');
  }
  const userFetch = opts.fetch;
  if (userFetch === undefined && typeof globalThis.fetch !== 'function') {
    throw new TypeError('MangoClient: no global fetch (Node 18+ required) and no fetch option given');
  }
  return {
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    apiKey: opts.apiKey,
    // Wrapped so the implementation is never invoked with the client as `this`.
    fetch: userFetch
      ? (input, init) => userFetch(input, init)
      : (input, init) => globalThis.fetch(input, init),
    maxRetries,
    timeoutMs,
    defaultHeaders: { ...(opts.defaultHeaders ?? {}) },
    onResponse: opts.onResponse,
  };
}

/** Encodes one path segment (ids are opaque to the client). */
export function pathSegment(value: string): string {
  if (typeof value !== 'string' || value === '')
    throw new TypeError('path parameter must be a non-empty string');
  return encodeURIComponent(value);
}

/**
 * Encodes query parameters the way the server's (Express "extended"/qs) parser reads them:
 * nested objects become `key[sub]=value`, arrays `key[]=value`, Dates ISO strings, booleans
 * `true`/`false`. `undefined` and `null` values are omitted. Brackets are left literal.
 */
export function encodeQuery(query: object | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  const add = (key: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (value instanceof Date) {
      parts.push(`${key}=${encodeURIComponent(value.toISOString())}`);
    } else if (Array.isArray(value)) {
      for (const item of value) add(`${key}[]`, item);
    } else if (typeof value === 'object') {
      for (const [sub, v] of Object.entries(value)) add(`${key}[${encodeURIComponent(sub)}]`, v);
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      parts.push(`${key}=${encodeURIComponent(String(value))}`);
    } else {
      throw new TypeError(`query parameter ${key} has unsupported type ${typeof value}`);
    }
  };
  for (const [key, value] of Object.entries(query)) add(encodeURIComponent(key), value);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** Whether a response status is worth retrying (the request may succeed unchanged later). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * A 409 saying that the request with this call's Idempotency-Key is still running elsewhere (a retry
 * after a lost connection, while the first attempt runs): sent again after `retry-after`, it gets that
 * request's response.
 */
export function isIdempotencyInProgress(status: number, text: string): boolean {
  if (status !== 409) return false;
  try {
    const body = JSON.parse(text) as { error?: { details?: { error_code?: unknown } } };
    return body?.error?.details?.error_code === 'idempotency_in_progress';
  } catch {
    return false;
  }
}

/** A random (v4) UUID: the default Idempotency-Key of a POST. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Delay before retry number `retry` (0-based): exponential backoff from {@link INITIAL_RETRY_DELAY_MS},
 * capped at {@link MAX_RETRY_DELAY_MS}, with up to 25 % downward jitter. A sane server `retry-after-ms`
 * or `retry-after` (seconds or HTTP date) takes precedence.
 */
export function retryDelayMs(retry: number, headers?: Headers, random: () => number = Math.random): number {
  const fromHeader = retryAfterMs(headers);
  if (fromHeader !== undefined) return fromHeader;
  const base = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** retry, MAX_RETRY_DELAY_MS);
  return Math.round(base * (1 - 0.25 * random()));
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  let ms: number | undefined;
  const rawMs = headers.get('retry-after-ms');
  if (rawMs !== null && rawMs.trim() !== '' && Number.isFinite(Number(rawMs))) ms = Number(rawMs);
  const raw = headers.get('retry-after');
  if (ms === undefined && raw !== null && raw.trim() !== '') {
    if (/^\d+(\.\d+)?$/.test(raw.trim())) ms = Number(raw) * 1000;
    else {
      const at = Date.parse(raw);
      if (!Number.isNaN(at)) ms = at - Date.now();
    }
  }
  if (ms === undefined || ms < 0 || ms > MAX_RETRY_AFTER_MS) return undefined;
  return Math.round(ms);
}

/** Sends requests for one client configuration: auth, JSON, retries, timeouts and error mapping. */
export class HttpClient {
  constructor(readonly config: ClientConfig) {}

  async request<T>(spec: RequestSpec): Promise<T> {
    const options = spec.options ?? {};
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const timeoutMs = Math.max(options.timeoutMs ?? this.config.timeoutMs, spec.minTimeoutMs ?? 0);
    const url = `${this.config.baseUrl}${spec.path}${encodeQuery(spec.query)}`;
    const headers = this.headers('application/json', options.headers);
    // One key per call, generated here once: every retry below re-sends the same headers.
    if (spec.method === 'POST' && headers[IDEMPOTENCY_KEY_HEADER] === undefined)
      headers[IDEMPOTENCY_KEY_HEADER] = options.idempotencyKey ?? newIdempotencyKey();
    let body: string | FormData | undefined;
    if (spec.form !== undefined) {
      body = spec.form;
    } else if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] = 'application/json';
    }

    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(
        url,
        { method: spec.method, headers, body },
        timeoutMs,
        options.signal,
      );
      if (outcome.kind === 'response') {
        const { status, headers: resHeaders, text } = outcome;
        if ((status >= 200 && status < 300) || spec.acceptStatuses?.includes(status)) {
          if (status >= 200 && status < 300) this.report(spec.method, url, status, resHeaders, headers);
          return parseSuccess<T>(status, resHeaders, text);
        }
        const inProgress =
          headers[IDEMPOTENCY_KEY_HEADER] !== undefined && isIdempotencyInProgress(status, text);
        if ((isRetryableStatus(status) || inProgress) && attempt < maxRetries) {
          await sleep(retryDelayMs(attempt, resHeaders), options.signal);
          continue;
        }
        throw errorFromResponse(status, resHeaders, text);
      }
      if (outcome.error instanceof ConnectionError && attempt < maxRetries) {
        await sleep(retryDelayMs(attempt), options.signal);
        continue;
      }
      throw outcome.error;
    }
  }

  /**
   * A binary download: retries like {@link request} until a 2xx response arrives, then resolves to the
   * unread `Response` (its body streams; the per-attempt timeout covers only the wait for headers).
   */
  async download(spec: RequestSpec): Promise<Response> {
    const options = spec.options ?? {};
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const timeoutMs = Math.max(options.timeoutMs ?? this.config.timeoutMs, spec.minTimeoutMs ?? 0);
    const url = `${this.config.baseUrl}${spec.path}${encodeQuery(spec.query)}`;
    const headers = this.headers('*/*', options.headers);
    for (let attempt = 0; ; attempt++) {
      const userSignal = options.signal;
      if (userSignal?.aborted) throw aborted(userSignal.reason);
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const onUserAbort = (): void => controller.abort();
      userSignal?.addEventListener('abort', onUserAbort, { once: true });
      let response: Response;
      try {
        response = await this.config.fetch(url, { method: spec.method, headers, signal: controller.signal });
      } catch (cause) {
        clearTimeout(timer);
        userSignal?.removeEventListener('abort', onUserAbort);
        if (userSignal?.aborted) throw aborted(userSignal.reason);
        const error = connectionFailure(spec.method, url, cause, timedOut, timeoutMs);
        if (attempt >= maxRetries) throw error;
        await sleep(retryDelayMs(attempt), userSignal);
        continue;
      }
      clearTimeout(timer);
      if (response.status >= 200 && response.status < 300) return response;
      const text = await response.text().catch(() => '');
      userSignal?.removeEventListener('abort', onUserAbort);
      if (isRetryableStatus(response.status) && attempt < maxRetries) {
        await sleep(retryDelayMs(attempt, response.headers), userSignal);
        continue;
      }
      throw errorFromResponse(response.status, response.headers, text);
    }
  }

  /**
   * Opens a long-lived `GET` in a single attempt (retrying is the caller's job) and resolves once the
   * response headers arrive. `timeoutMs` bounds the wait for headers and then every silence between
   * chunks (see {@link OpenStream.touch}); the caller's signal aborts the connection at any time.
   */
  async openStream(spec: StreamSpec): Promise<StreamOutcome> {
    const options = spec.options ?? {};
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const url = `${this.config.baseUrl}${spec.path}${encodeQuery(spec.query)}`;
    const headers = this.headers('text/event-stream', {
      ...(options.headers ?? {}),
      ...(spec.headers ?? {}),
    });
    const userSignal = options.signal;
    if (userSignal?.aborted) return { kind: 'error', error: aborted(userSignal.reason), retryable: false };

    const controller = new AbortController();
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
    };
    const onUserAbort = (): void => controller.abort();
    const close = (): void => {
      clearTimeout(timer);
      userSignal?.removeEventListener('abort', onUserAbort);
      controller.abort();
    };
    userSignal?.addEventListener('abort', onUserAbort, { once: true });
    touch();

    let response: Response;
    try {
      response = await this.config.fetch(url, { method: 'GET', headers, signal: controller.signal });
    } catch (cause) {
      close();
      if (userSignal?.aborted) return { kind: 'error', error: aborted(userSignal.reason), retryable: false };
      return {
        kind: 'error',
        error: connectionFailure('GET', url, cause, timedOut, timeoutMs),
        retryable: true,
      };
    }
    if (response.status < 200 || response.status >= 300 || response.body === null) {
      let text = '';
      try {
        text = await response.text();
      } catch {
        // The error body is best-effort.
      }
      close();
      if (userSignal?.aborted) return { kind: 'error', error: aborted(userSignal.reason), retryable: false };
      return {
        kind: 'error',
        error: errorFromResponse(response.status, response.headers, text),
        retryable: isRetryableStatus(response.status),
        headers: response.headers,
      };
    }
    const body = response.body;
    return {
      kind: 'open',
      stream: {
        body,
        touch,
        close,
        get timedOut() {
          return timedOut;
        },
      },
    };
  }

  private report(
    method: HttpMethod,
    url: string,
    status: number,
    resHeaders: Headers,
    sent: Record<string, string>,
  ): void {
    this.config.onResponse?.({
      method,
      url,
      status,
      requestId: resHeaders.get('request-id') ?? undefined,
      idempotencyKey: sent[IDEMPOTENCY_KEY_HEADER],
      replayed: resHeaders.get('idempotent-replayed') === 'true',
    });
  }

  private headers(accept: string, extra: Record<string, string> | undefined): Record<string, string> {
    return {
      accept,
      'user-agent': `mango-sdk-typescript/${SDK_VERSION}`,
      ...lowerCaseKeys(this.config.defaultHeaders),
      ...lowerCaseKeys(extra ?? {}),
      authorization: `Bearer ${this.config.apiKey}`,
    };
  }

  /** One HTTP exchange, body included, under its own timeout. Never throws; failures are returned. */
  private async attempt(
    url: string,
    init: { method: HttpMethod; headers: Record<string, string>; body: string | FormData | undefined },
    timeoutMs: number,
    userSignal: AbortSignal | undefined,
  ): Promise<
    | { kind: 'response'; status: number; headers: Headers; text: string }
    | { kind: 'error'; error: MangoError }
  > {
    if (userSignal?.aborted) return { kind: 'error', error: aborted(userSignal.reason) };
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onUserAbort = (): void => controller.abort();
    userSignal?.addEventListener('abort', onUserAbort, { once: true });
    try {
      const response = await this.config.fetch(url, { ...init, signal: controller.signal });
      const text = await response.text();
      return { kind: 'response', status: response.status, headers: response.headers, text };
    } catch (cause) {
      if (userSignal?.aborted) return { kind: 'error', error: aborted(userSignal.reason) };
      return { kind: 'error', error: connectionFailure(init.method, url, cause, timedOut, timeoutMs) };
    } finally {
      clearTimeout(timer);
      userSignal?.removeEventListener('abort', onUserAbort);
    }
  }
}

function parseSuccess<T>(status: number, headers: Headers, text: string): T {
  if (status === 204 || text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new MangoError({
      status,
      type: 'api_error',
      message: `Invalid JSON in a ${status} response`,
      requestId: headers.get('request-id') ?? undefined,
      headers,
      cause,
    });
  }
}

/** A `ConnectionTimeoutError` when the timer fired, else a `ConnectionError`. */
export function connectionFailure(
  method: string,
  url: string,
  cause: unknown,
  timedOut: boolean,
  timeoutMs: number,
): ConnectionError {
  if (timedOut) {
    return new ConnectionTimeoutError({
      message: `Request timed out after ${timeoutMs} ms: ${method} ${url}`,
      cause,
    });
  }
  return new ConnectionError({ message: `Connection error: ${method} ${url}: ${describe(cause)}`, cause });
}

export function aborted(reason: unknown): RequestAbortedError {
  return new RequestAbortedError({ message: 'Request was aborted by the caller', cause: reason });
}

/** Waits `ms`; rejects with `RequestAbortedError` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal.reason));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    const innerText = inner instanceof Error ? ` (${inner.message})` : '';
    return `${cause.message}${innerText}`;
  }
  return String(cause);
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}
