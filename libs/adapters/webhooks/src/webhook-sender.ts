import {
  boundedFetch,
  egressRefusalIn,
  FetchLike,
  JudgedEgress,
  outboundLimitIn,
} from '@mango/platform-egress';
import { Cidr, isDelivered, judgeAddress } from '@mango/domain-webhooks';
import { Webhook } from 'standardwebhooks';

export interface SendInput {
  url: string;
  /** `webhook-id`: the event id (`whe_…`), the same on every attempt. */
  messageId: string;
  /** The exact JSON body that is signed and sent. */
  body: string;
  /** Signing secrets (`whsec_…`): one signature each in `webhook-signature` (rotation overlap). */
  secrets: string[];
  /** Stamped per attempt (`webhook-timestamp`). */
  timestamp: Date;
}

export interface SendResult {
  delivered: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** A refusal that retrying cannot fix (the address is not allowed). */
  permanent: boolean;
}

const MAX_ERROR = 500;
/** The receiver's answer body is not used; this much of it is read (to see the answer end), no more. */
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

export interface WebhookSenderOptions {
  allow: readonly Cidr[];
  /** The whole attempt: connecting, the answer's headers and its body (`MANGO_WEBHOOK_TIMEOUT_MS`). */
  timeoutMs: number;
  /** The most answer-body bytes read; a longer answer fails the attempt (default 64 KiB). */
  maxResponseBytes?: number;
}

/**
 * Delivers one signed attempt (Standard Webhooks headers, signed with the `standardwebhooks` library).
 * The host is resolved where the socket is opened and every address judged (the shared judged egress):
 * the connection uses the judged address, so DNS rebinding cannot slip past. Redirects are never
 * followed: a 3xx is a failed attempt. The attempt is bounded (boundedFetch): `timeoutMs` covers the
 * headers and the whole answer body, the body is read up to `maxResponseBytes`, and `signal` (the
 * activity's cancellation) aborts it — each closes the connection.
 */
export class WebhookSender {
  private readonly egress: JudgedEgress;
  private readonly fetch: FetchLike;

  constructor(private readonly options: WebhookSenderOptions) {
    this.egress = new JudgedEgress(
      (a, port) => {
        const verdict = judgeAddress(a, options.allow, port);
        return verdict.allowed ? null : verdict.reason;
      },
      undefined,
      // A fresh connection per attempt: nothing pooled outlives it.
      { keepAlive: false },
    );
    this.fetch = boundedFetch(this.egress.fetch, {
      deadlineMs: options.timeoutMs,
      maxBytes: options.maxResponseBytes ?? WEBHOOK_MAX_RESPONSE_BYTES,
    });
  }

  /** The three Standard Webhooks headers for one attempt. */
  static sign(
    input: Pick<SendInput, 'messageId' | 'body' | 'secrets' | 'timestamp'>,
  ): Record<string, string> {
    const signatures = input.secrets.map((s) =>
      new Webhook(s).sign(input.messageId, input.timestamp, input.body),
    );
    return {
      'webhook-id': input.messageId,
      'webhook-timestamp': String(Math.floor(input.timestamp.getTime() / 1000)),
      'webhook-signature': signatures.join(' '),
    };
  }

  /**
   * One attempt. A failure of the receiver (refused, unreachable, timed out, too long an answer, a non-2xx)
   * is a result; `signal` being aborted rethrows (the activity was cancelled: no attempt outcome).
   */
  async send(input: SendInput, signal?: AbortSignal): Promise<SendResult> {
    const started = Date.now();
    const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({
      ...r,
      latencyMs: Date.now() - started,
    });
    let statusCode: number | null = null;
    try {
      const res = await this.fetch(input.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Mango-Webhooks/1',
          ...WebhookSender.sign(input),
        },
        body: input.body,
        redirect: 'manual',
        signal,
      });
      statusCode = res.status;
      await res.arrayBuffer(); // read to its end (bounded): only the status matters
      const delivered = isDelivered(statusCode);
      return done({
        delivered,
        statusCode,
        error: delivered
          ? null
          : statusCode >= 300 && statusCode < 400
            ? `redirect (${statusCode}) refused: webhook endpoints must answer directly`
            : `endpoint answered ${statusCode}`,
        permanent: false,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const refusal = egressRefusalIn(err);
      const reason = refusal ?? outboundLimitIn(err) ?? innermost(err);
      return done({
        delivered: false,
        statusCode,
        error: reason.message.slice(0, MAX_ERROR),
        permanent: refusal !== null,
      });
    }
  }
}

/** The most specific error in a chain (fetch reports "fetch failed" with the socket's error as the cause). */
function innermost(err: unknown): Error {
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && e.cause instanceof Error && depth < 6; depth++) e = e.cause;
  return e instanceof Error ? e : new Error(String(err));
}
