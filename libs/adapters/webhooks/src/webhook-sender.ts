import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { egressRefusalIn, judgedLookup } from '@mango/platform-egress';
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

/**
 * Delivers one signed attempt (Standard Webhooks headers, signed with the `standardwebhooks` library).
 * The host is resolved here and every address judged before connecting — the connection uses the judged
 * address, so DNS rebinding cannot slip past. Redirects are never followed: a 3xx is a failed attempt.
 */
export class WebhookSender {
  constructor(private readonly options: { allow: readonly Cidr[]; timeoutMs: number }) {}

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

  /** Connections open only to judged addresses (the shared egress lookup), so DNS rebinding cannot slip past. */
  private readonly lookup = judgedLookup((a) => {
    const verdict = judgeAddress(a, this.options.allow);
    return verdict.allowed ? null : verdict.reason;
  }) as unknown as LookupFunction;

  async send(input: SendInput): Promise<SendResult> {
    const started = Date.now();
    const url = new URL(input.url);
    const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({
      ...r,
      latencyMs: Date.now() - started,
    });
    // An IP literal never goes through lookup: judge it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (/^[\d.]+$/.test(literal) || literal.includes(':')) {
      const verdict = judgeAddress(literal, this.options.allow);
      if (!verdict.allowed)
        return done({ delivered: false, statusCode: null, error: verdict.reason, permanent: true });
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Mango-Webhooks/1',
      ...WebhookSender.sign(input),
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<SendResult>((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers,
          lookup: this.lookup,
          timeout: this.options.timeoutMs,
          // A fresh connection per attempt: a pooled keep-alive socket would skip the lookup (and its judgement).
          agent: false,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          res.resume(); // the body is not read: only the status matters
          res.on('end', () => {
            const delivered = isDelivered(status);
            resolve(
              done({
                delivered,
                statusCode: status,
                error: delivered
                  ? null
                  : status >= 300 && status < 400
                    ? `redirect (${status}) refused: webhook endpoints must answer directly`
                    : `endpoint answered ${status}`,
                permanent: false,
              }),
            );
          });
          res.on('error', () => undefined);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      req.on('error', (err) =>
        resolve(
          done({
            delivered: false,
            statusCode: null,
            error: String(err.message).slice(0, MAX_ERROR),
            permanent: egressRefusalIn(err) !== null,
          }),
        ),
      );
      req.end(input.body);
    });
  }
}
