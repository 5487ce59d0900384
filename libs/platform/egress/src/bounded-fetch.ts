/**
 * The one home for "a bounded outbound read" (docs/security-model-notes/outbound.md): every outbound HTTP
 * call Mango makes to an address it does not run (webhook receivers, MCP servers, the model endpoint, OAuth
 * token endpoints) goes through `boundedFetch`, which gives it
 * - an overall deadline that covers the headers AND the whole body (a receiver that answers 200 and then
 *   trickles one byte a second is cut at the deadline, and its connection closed);
 * - an optional idle bound: the longest silence while a read is waiting (a stalled stream);
 * - a size cap enforced while reading: bytes are counted as they arrive and the read fails at the cap
 *   (a declared `content-length` above the cap fails before any body byte is read);
 * - cancellation: the caller's `signal` (a Temporal activity's `cancellationSignal`) aborts the request
 *   and its body, closing the connection.
 * A bound that trips aborts the underlying request, so the socket is closed, not left to drain.
 */

/** Which bound an outbound call ran into. */
export type OutboundLimit = 'deadline' | 'idle' | 'too_large';

/** An outbound call cut by one of its bounds (never by the caller's cancellation). */
export class OutboundLimitError extends Error {
  constructor(
    readonly limit: OutboundLimit,
    message: string,
    /** Response-body bytes read when the bound tripped. */
    readonly bytesRead: number,
  ) {
    super(message);
    this.name = 'OutboundLimitError';
  }
}

export interface OutboundBounds {
  /** The whole call: connecting, the headers and the entire body (ms). */
  deadlineMs: number;
  /** The longest wait for the headers or for the next body chunk while the reader is waiting (ms). */
  idleMs?: number;
  /** The most response-body bytes read (the read fails once more arrive). */
  maxBytes: number;
  /**
   * Told when a bound trips (before the read fails): for callers whose client library swallows body
   * errors (an SSE reader that reconnects), so they can fail the whole operation at once.
   */
  onLimit?: (err: OutboundLimitError) => void;
}

/** The subset of `fetch` the bounded wrapper needs and gives (the platform's `Response`). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The bound inside an error chain (fetch and SDKs wrap errors), if there is one. */
export function outboundLimitIn(err: unknown): OutboundLimitError | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++)
    if (e instanceof OutboundLimitError) return e;
  return null;
}

/**
 * `fetchImpl` under `bounds`. The returned `Response` has a counted body: reading it (`text()`,
 * `arrayBuffer()`, a stream reader) fails with an `OutboundLimitError` at the cap or the deadline. The
 * deadline stops when the body has been read to its end or cancelled.
 */
export function boundedFetch(fetchImpl: FetchLike, bounds: OutboundBounds): FetchLike {
  return async (input, init = {}) => {
    const outer = init.signal ?? undefined;
    outer?.throwIfAborted();
    const ac = new AbortController();
    let failure: OutboundLimitError | undefined;
    let bytesRead = 0;
    const fail = (limit: OutboundLimit, message: string) => {
      if (!failure && !ac.signal.aborted) {
        failure = new OutboundLimitError(limit, message, bytesRead);
        ac.abort(failure);
        bounds.onLimit?.(failure);
      }
    };
    const onOuter = () => ac.abort(outer!.reason);
    outer?.addEventListener('abort', onOuter, { once: true });
    const deadline = setTimeout(
      () => fail('deadline', `no complete answer within ${bounds.deadlineMs} ms`),
      bounds.deadlineMs,
    );
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      if (bounds.idleMs)
        idle = setTimeout(() => fail('idle', `nothing received for ${bounds.idleMs} ms`), bounds.idleMs);
    };
    const settle = () => {
      clearTimeout(deadline);
      clearTimeout(idle);
      outer?.removeEventListener('abort', onOuter);
    };
    armIdle();
    let res: Response;
    try {
      res = await fetchImpl(input, { ...init, signal: ac.signal });
    } catch (err) {
      settle();
      throw failure ?? err;
    }
    clearTimeout(idle);
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > bounds.maxBytes) {
      fail('too_large', `the answer declares ${declared} bytes, more than the ${bounds.maxBytes}-byte cap`);
      settle();
      throw failure ?? new Error('aborted');
    }
    if (!res.body) {
      settle();
      return res;
    }
    const reader = res.body.getReader();
    const counted = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          armIdle();
          try {
            const { done, value } = await reader.read();
            clearTimeout(idle);
            if (done) {
              settle();
              controller.close();
              return;
            }
            bytesRead += value.byteLength;
            if (bytesRead > bounds.maxBytes) {
              fail('too_large', `the answer is larger than the ${bounds.maxBytes}-byte cap`);
              settle();
              controller.error(failure);
              return;
            }
            controller.enqueue(value);
          } catch (err) {
            settle();
            controller.error(failure ?? err);
          }
        },
        async cancel(reason) {
          settle();
          ac.abort(reason);
          await reader.cancel(reason).catch(() => undefined);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
