import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { InvalidWebhookSignatureError, unwrapWebhook } from './webhooks';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const KNOWN = secret();
const event = {
  type: 'event',
  id: 'whe_01JD2Y3QX9V5M8K7R6T4W2P0AB',
  created_at: '2026-12-01T10:00:00.000Z',
  data: { type: 'session.created', id: 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB', workspace_id: 'wrkspc_default' },
};

function delivery(secrets: string[], at = new Date(), body = JSON.stringify(event), id = event.id) {
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
    },
  };
}

describe('unwrapWebhook', () => {
  it('verifies and parses a delivery; accepts a Fetch Headers object', () => {
    const s = secret();
    const d = delivery([s]);
    expect(unwrapWebhook(d.body, d.headers, s)).toEqual(event);
    expect(unwrapWebhook(Buffer.from(d.body), new Headers(d.headers), [s]).id).toBe(event.id);
  });

  it('during a rotation either secret verifies a doubly signed delivery', () => {
    const [old, next] = [secret(), secret()];
    const d = delivery([next, old]);
    expect(unwrapWebhook(d.body, d.headers, old).id).toBe(event.id);
    expect(unwrapWebhook(d.body, d.headers, [secret(), next]).id).toBe(event.id);
  });

  it.each<[string, () => { body: string; headers: Record<string, string> }, RegExp]>([
    ['a wrong secret', () => delivery([secret()]), /signature/i],
    [
      'a tampered body',
      () => ({ ...delivery([KNOWN]), body: JSON.stringify({ ...event, id: 'whe_x' }) }),
      /signature/i,
    ],
    ['a stale timestamp', () => delivery([KNOWN], new Date(Date.now() - 10 * 60_000)), /timestamp/i],
    [
      'a missing header',
      () => ({ ...delivery([KNOWN]), headers: { 'webhook-id': event.id } }),
      /header|signature/i,
    ],
    [
      'a body for another webhook-id',
      () => delivery([KNOWN], new Date(), JSON.stringify(event), 'whe_other'),
      /not a Mango webhook event/,
    ],
  ])('refuses %s', (_label, make, re) => {
    const d = make();
    expect(() => unwrapWebhook(d.body, d.headers, KNOWN)).toThrow(InvalidWebhookSignatureError);
    expect(() => unwrapWebhook(d.body, d.headers, KNOWN)).toThrow(re);
  });

  it('refuses an empty secret list', () => {
    const d = delivery([KNOWN]);
    expect(() => unwrapWebhook(d.body, d.headers, [])).toThrow(/no signing secret/);
  });
});
