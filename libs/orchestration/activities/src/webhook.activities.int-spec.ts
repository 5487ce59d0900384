import { randomBytes } from 'node:crypto';
import { generateWebhookSecret, SecretBox, sealWebhookSecret, WebhookSender } from '@mango/adapter-webhooks';
import { parseCidrList } from '@mango/domain-webhooks';
import { createDataSource, recordWebhookEvents } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { keyringFromSettings } from '@mango/platform-secrets';
import { createTestDatabase, TestDatabase, WebhookReceiver } from '@mango/testing';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { DataSource } from 'typeorm';
import { createWebhookActivities } from './webhook.activities';

describe('webhook delivery attempts and sealed signing secrets (real PostgreSQL, a real receiver)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let receiver: WebhookReceiver;
  const legacyKey = randomBytes(32).toString('hex');
  /** What older versions stored: sealed with MANGO_WEBHOOK_SECRETS_KEY, no key id, no binding. */
  const legacyBox = new SecretBox(legacyKey);
  const keyring = keyringFromSettings({
    MANGO_KEYRING: `k1:${randomBytes(32).toString('base64')}`,
    MANGO_WEBHOOK_SECRETS_KEY: legacyKey,
  })!;
  const sender = new WebhookSender({ allow: parseCidrList('127.0.0.0/8'), timeoutMs: 10_000 });
  const activities = () => createWebhookActivities({ dataSource: ds, sender, keyring });
  /** One attempt, run as Temporal runs it (an activity context: heartbeats and cancellation). */
  const deliver = (input: Parameters<ReturnType<typeof activities>['deliverWebhookAttempt']>[0]) =>
    new MockActivityEnvironment().run(activities().deliverWebhookAttempt, input);

  beforeAll(async () => {
    db = await createTestDatabase('webhookact');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.close();
    await ds.destroy();
    await db.drop();
  });

  async function endpoint(path: string, legacy = false): Promise<{ id: string; secret: string }> {
    const id = newId('webhook', Date.now());
    const secret = generateWebhookSecret();
    const sealed = legacy ? { sealed: legacyBox.seal(secret) } : sealWebhookSecret(keyring, id, secret);
    await ds.query(
      `INSERT INTO webhooks (id, workspace_id, url, event_types, description, metadata, secrets, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', $2, ARRAY['vault.created'], NULL, '{}', $3::jsonb, now(), now())`,
      [id, `${receiver.url}${path}`, JSON.stringify([{ ...sealed, expires_at: null }])],
    );
    return { id, secret };
  }

  async function deliveryTo(webhookId: string): Promise<string> {
    await ds.transaction((tx) =>
      recordWebhookEvents(tx, 'wrkspc_default', [{ type: 'vault.created', id: 'vlt_x' }], new Date()),
    );
    const [row] = await ds.query(
      "SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'pending' ORDER BY id DESC LIMIT 1",
      [webhookId],
    );
    return row.id;
  }

  it('a signing secret copied from another endpoint row does not open: the attempt is abandoned, nothing is sent', async () => {
    const a = await endpoint('/a');
    const b = await endpoint('/b');
    receiver.trust(a.secret);
    await ds.query(
      'UPDATE webhooks SET secrets = (SELECT secrets FROM webhooks WHERE id = $1) WHERE id = $2',
      [a.id, b.id],
    );
    const id = await deliveryTo(b.id);
    const outcome = await deliver({ deliveryId: id, attempt: 1, final: false });
    expect({ outcome, sentToB: receiver.at('/b').length }).toEqual({ outcome: 'abandoned', sentToB: 0 });
    const [attempt] = await ds.query('SELECT error FROM webhook_delivery_attempts WHERE delivery_id = $1', [
      id,
    ]);
    expect(attempt.error).toMatch(new RegExp(`signing secret of webhook ${b.id} cannot be opened`));
    expect(attempt.error).not.toContain(a.secret);
    // The endpoint it was copied from still signs with its own secret.
    const fromA = await deliveryTo(a.id);
    expect(await deliver({ deliveryId: fromA, attempt: 1, final: false })).toBe('delivered');
    expect(receiver.at('/a').map((r) => r.verifiedWith)).toEqual([[a.secret]]);
  });

  it('a secret sealed by older versions (MANGO_WEBHOOK_SECRETS_KEY, no key id) still signs deliveries', async () => {
    const old = await endpoint('/old', true);
    receiver.trust(old.secret);
    const id = await deliveryTo(old.id);
    expect(await deliver({ deliveryId: id, attempt: 1, final: false })).toBe('delivered');
    expect(receiver.at('/old').map((r) => r.verifiedWith)).toEqual([[old.secret]]);
  });
});
