import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { createWebhookActivities } from '@mango/activities';
import { generateWebhookSecret, sealWebhookSecret, WebhookSender } from '@mango/adapter-webhooks';
import { parseCidrList } from '@mango/domain-webhooks';
import { createDataSource } from '@mango/persistence';
import { keyringFromSettings } from '@mango/platform-secrets';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { webhookDeliveryWorkflow } from '@mango/workflows';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { DataSource } from 'typeorm';
import { testWorkflowBundle } from './test-workflow-bundle';

/** A receiver on 127.0.0.1 that answers 200 and then writes one byte every `everyMs`, forever. */
async function tricklingReceiver(everyMs: number) {
  const closed: Promise<void>[] = [];
  let requests = 0;
  let connected: () => void = () => undefined;
  const firstRequest = new Promise<void>((r) => (connected = r));
  const server = createServer((_req, res) => {
    requests++;
    connected();
    res.writeHead(200);
    const t = setInterval(() => res.write('x'), everyMs);
    res.on('close', () => clearInterval(t));
  });
  server.on('connection', (s: Socket) => closed.push(new Promise((r) => s.once('close', () => r()))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    firstRequest,
    requests: () => requests,
    /** Every connection closed (undici may also open a spare one after an aborted request; it closes too). */
    allClosed: () => Promise.all(closed),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * One webhook delivery workflow on the real Temporal server, its real activity on a real database and a
 * real receiver: the attempt's bounds (a body that never ends is a timed-out attempt, recorded like any
 * other failure) and cancellation (a cancelled delivery aborts the request in flight; the activity's
 * heartbeats are what deliver the cancellation).
 */
describe('webhook delivery attempts are bounded and cancellable (real Temporal, PostgreSQL, HTTP)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const keyring = keyringFromSettings({ MANGO_KEYRING: `k1:${randomBytes(32).toString('base64')}` })!;
  const secret = generateWebhookSecret();
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase('webhook-attempt');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
  }, 60_000);
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** A webhook, one event and its pending delivery to `url`; returns the delivery id. */
  async function pendingDelivery(url: string): Promise<string> {
    const n = `${Date.now()}${seq++}`;
    const [hook, event, delivery] = [`whk_${n}`, `whe_${n}`, `whd_${n}`];
    await ds.query(
      `INSERT INTO webhooks (id, workspace_id, url, event_types, description, metadata, secrets, created_at, updated_at)
       VALUES ($1, 'wrkspc_default', $2, '{session.created}', NULL, '{}', $3, now(), now())`,
      [hook, url, JSON.stringify([{ ...sealWebhookSecret(keyring, hook, secret), expires_at: null }])],
    );
    await ds.query(
      `INSERT INTO webhook_events (id, workspace_id, type, data, created_at)
       VALUES ($1, 'wrkspc_default', 'session.created', '{"type":"session.created"}', now())`,
      [event],
    );
    await ds.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, trigger, state, created_at)
       VALUES ($1, $2, $3, 'event', 'pending', now())`,
      [delivery, hook, event],
    );
    return delivery;
  }

  async function withWorker<T>(
    sender: WebhookSender,
    fn: (client: Client, taskQueue: string) => Promise<T>,
  ): Promise<T> {
    const address = process.env.MANGO_TEMPORAL_ADDRESS!;
    const taskQueue = `webhook-attempt-${Date.now()}-${seq++}`;
    const nativeConnection = await NativeConnection.connect({ address });
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowBundle: await testWorkflowBundle(),
      activities: createWebhookActivities({ dataSource: ds, sender, keyring }),
    });
    const connection = await Connection.connect({ address });
    try {
      return await worker.runUntil(fn(new Client({ connection }), taskQueue));
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  }

  it('a receiver that answers 200 and then trickles forever: every attempt fails at the deadline, is recorded, and its connection is closed', async () => {
    const receiver = await tricklingReceiver(50);
    try {
      const deliveryId = await pendingDelivery(receiver.url);
      const sender = new WebhookSender({ allow: parseCidrList('127.0.0.1/32'), timeoutMs: 500 });
      const outcome = await withWorker(sender, (client, taskQueue) =>
        client.workflow.execute<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
          taskQueue,
          workflowId: deliveryId,
          args: [{ deliveryId, retryBaseMs: 10 }],
        }),
      );
      expect(outcome).toBe('failed');
      const attempts: Array<{ attempt: number; status_code: number | null; error: string }> = await ds.query(
        'SELECT attempt, status_code, error FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt',
        [deliveryId],
      );
      expect(attempts).toEqual(
        [1, 2, 3].map((attempt) => ({
          attempt,
          status_code: 200,
          error: 'no complete answer within 500 ms',
        })),
      );
      const [delivery] = await ds.query('SELECT state, attempts FROM webhook_deliveries WHERE id = $1', [
        deliveryId,
      ]);
      expect(delivery).toEqual({ state: 'failed', attempts: 3 });
      await receiver.allClosed();
      expect(receiver.requests()).toBe(3);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('cancelling the delivery mid-attempt aborts the outbound request (the receiver sees the close); no attempt is recorded', async () => {
    const receiver = await tricklingReceiver(50);
    try {
      const deliveryId = await pendingDelivery(receiver.url);
      // A deadline far beyond the test: only the cancellation can end this attempt.
      const sender = new WebhookSender({ allow: parseCidrList('127.0.0.1/32'), timeoutMs: 3_600_000 });
      const err = await withWorker(sender, async (client, taskQueue) => {
        const handle = await client.workflow.start<typeof webhookDeliveryWorkflow>(
          'webhookDeliveryWorkflow',
          {
            taskQueue,
            workflowId: deliveryId,
            args: [{ deliveryId, retryBaseMs: 10 }],
          },
        );
        await receiver.firstRequest;
        await handle.cancel();
        await receiver.allClosed();
        return handle.result().catch((e: unknown) => e);
      });
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(receiver.requests()).toBe(1);
      const attempts = await ds.query('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = $1', [
        deliveryId,
      ]);
      expect(attempts).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
