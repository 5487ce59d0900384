import { ConnectionError, isRetryableStatus, MangoClient, MangoError } from '@mango/sdk';

/** The Memory routes the worker uses, with the Session's Work token (openapi.yaml, Memory Stores shapes). */
export interface RemoteMemory {
  id: string;
  path: string;
  content_sha256: string;
  content_size_bytes: number;
  content: string | null;
}

export interface MemoryListPage {
  data: Array<RemoteMemory | { type: 'memory_prefix'; path: string }>;
  next_page: string | null;
}

export interface MemoryApi {
  list(
    storeId: string,
    q: { view: 'basic' | 'full'; limit: number; page?: string },
    signal?: AbortSignal,
  ): Promise<MemoryListPage>;
  get(storeId: string, memoryId: string, signal?: AbortSignal): Promise<RemoteMemory>;
  create(
    storeId: string,
    body: { path: string; content: string },
    signal?: AbortSignal,
  ): Promise<RemoteMemory>;
  update(
    storeId: string,
    memoryId: string,
    body: { content: string; precondition: { type: 'content_sha256'; content_sha256: string } },
    signal?: AbortSignal,
  ): Promise<RemoteMemory>;
  delete(storeId: string, memoryId: string, expectedSha256: string, signal?: AbortSignal): Promise<void>;
}

/** A refused Memory request: HTTP status and the error envelope's type. */
export class MemoryApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(`${status} ${errorType}: ${message}`);
    this.name = 'MemoryApiError';
  }
}

/**
 * Whether a Memory call failed for a reason that may pass: no response (refused, reset, timed out; from
 * fetch or the SDK) or a 408, 429 or 5xx answer. A refusal (4xx) or the caller's abort is not.
 */
export function isTemporaryMemoryError(err: unknown): boolean {
  if (err instanceof MemoryApiError) return isRetryableStatus(err.status);
  if (err instanceof ConnectionError) return true;
  // fetch (HttpMemoryApi): a network failure is a TypeError('fetch failed'); the call's own bound a
  // TimeoutError. By name: an error from another realm (a test VM) is no `instanceof TypeError` here.
  const { name, message } = (err ?? {}) as { name?: string; message?: string };
  return (name === 'TypeError' && message === 'fetch failed') || name === 'TimeoutError';
}

/**
 * `MemoryApi` over HTTP with a bearer credential (the Work token). No retries: a failed call is retried by
 * the next sync pass. Each call is bounded by `timeoutMs` and the caller's signal. The credential is never
 * logged or put into an error.
 */
export class HttpMemoryApi implements MemoryApi {
  private readonly base: string;

  constructor(
    private readonly opts: { baseUrl: string; token: string; timeoutMs?: number; fetch?: typeof fetch },
  ) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 15_000);
    const res = await (this.opts.fetch ?? fetch)(this.base + path, {
      method,
      headers: {
        authorization: `Bearer ${this.opts.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return (text ? JSON.parse(text) : undefined) as T;
    // A refusal's body is the error envelope, unless a proxy in between answered (e.g. a 502 page).
    let envelope: { error?: { type?: string; message?: string } } | undefined;
    try {
      envelope = text ? (JSON.parse(text) as typeof envelope) : undefined;
    } catch {
      envelope = undefined;
    }
    const err = envelope?.error;
    throw new MemoryApiError(res.status, err?.type ?? 'unknown', err?.message ?? `HTTP ${res.status}`);
  }

  private store(id: string): string {
    return `/v1/memory_stores/${encodeURIComponent(id)}/memories`;
  }

  list(storeId: string, q: { view: 'basic' | 'full'; limit: number; page?: string }, signal?: AbortSignal) {
    const qs = new URLSearchParams({
      view: q.view,
      limit: String(q.limit),
      ...(q.page ? { page: q.page } : {}),
    });
    return this.call<MemoryListPage>('GET', `${this.store(storeId)}?${qs}`, undefined, signal);
  }

  get(storeId: string, memoryId: string, signal?: AbortSignal) {
    return this.call<RemoteMemory>(
      'GET',
      `${this.store(storeId)}/${encodeURIComponent(memoryId)}?view=full`,
      undefined,
      signal,
    );
  }

  create(storeId: string, body: { path: string; content: string }, signal?: AbortSignal) {
    return this.call<RemoteMemory>('POST', this.store(storeId), body, signal);
  }

  update(
    storeId: string,
    memoryId: string,
    body: { content: string; precondition: { type: 'content_sha256'; content_sha256: string } },
    signal?: AbortSignal,
  ) {
    return this.call<RemoteMemory>(
      'POST',
      `${this.store(storeId)}/${encodeURIComponent(memoryId)}`,
      body,
      signal,
    );
  }

  async delete(storeId: string, memoryId: string, expectedSha256: string, signal?: AbortSignal) {
    const qs = new URLSearchParams({ expected_content_sha256: expectedSha256 });
    await this.call(
      'DELETE',
      `${this.store(storeId)}/${encodeURIComponent(memoryId)}?${qs}`,
      undefined,
      signal,
    );
  }
}

/**
 * `MemoryApi` over the SDK client the item runner already holds (bound to the Work token):
 * `new MemorySync({ client: sdkMemoryApi(client), … })`. One attempt per call (the next pass retries);
 * refusals become MemoryApiError.
 */
export function sdkMemoryApi(client: MangoClient): MemoryApi {
  const m = client.memoryStores.memories;
  const once = (signal?: AbortSignal) => ({ signal, maxRetries: 0 });
  const wrap = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof MangoError && err.status !== undefined)
        throw new MemoryApiError(err.status, String(err.type), err.message);
      throw err;
    }
  };
  return {
    list: (storeId, q, signal) =>
      wrap(
        async () =>
          (await m.list(
            storeId,
            { view: q.view, limit: q.limit, page: q.page },
            once(signal),
          )) as MemoryListPage,
      ),
    get: (storeId, memoryId, signal) =>
      wrap(() => m.retrieve(storeId, memoryId, { view: 'full' }, once(signal))),
    create: (storeId, body, signal) => wrap(() => m.create(storeId, body, {}, once(signal))),
    update: (storeId, memoryId, body, signal) =>
      wrap(() => m.update(storeId, memoryId, body, {}, once(signal))),
    delete: (storeId, memoryId, expectedSha256, signal) =>
      wrap(async () => {
        await m.delete(storeId, memoryId, { expected_content_sha256: expectedSha256 }, once(signal));
      }),
  };
}
