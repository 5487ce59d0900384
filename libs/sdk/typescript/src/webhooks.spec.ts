import { verifyWebhook, WebhookVerificationError } from './webhooks';

// The example of the Standard Webhooks specification (github.com/standard-webhooks/standard-webhooks).
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = '{"test": 2432232314}';
const headers = {
  'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  'webhook-timestamp': '1614265330',
  'webhook-signature': 'v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const now = 1614265330_000;

describe('verifyWebhook', () => {
  it('accepts the specification example (any matching v1 entry) and returns the parsed body', () => {
    expect(verifyWebhook(body, headers, secret, { now })).toEqual({ test: 2432232314 });
    expect(
      verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret, { now: now + 299_000 }),
    ).toEqual({
      test: 2432232314,
    });
  });

  it('rejects a changed body, id or key, a stale or future timestamp, and missing headers', () => {
    const bad =
      (b: string, h: Record<string, string>, s = secret, at = now) =>
      () =>
        verifyWebhook(b, h, s, { now: at });
    expect(bad('{"test": 2432232315}', headers)).toThrow(WebhookVerificationError);
    expect(bad(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow(/signature/);
    expect(bad(body, headers, 'whsec_' + Buffer.from('another key').toString('base64'))).toThrow(/signature/);
    expect(bad(body, headers, secret, now + 301_000)).toThrow(/tolerance/);
    expect(bad(body, headers, secret, now - 301_000)).toThrow(/tolerance/);
    expect(
      bad(body, { ...headers, 'webhook-signature': 'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' }),
    ).toThrow(/signature/);
    const { 'webhook-id': _, ...noId } = headers;
    expect(bad(body, noId)).toThrow(/missing/);
  });
});
