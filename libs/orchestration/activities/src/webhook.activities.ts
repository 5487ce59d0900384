import { openWebhookSecret, WebhookSender } from '@mango/adapter-webhooks';
import type { WebhookActivities, WebhookAttemptOutcome } from '@mango/workflows';
import type { StoredWebhookSecret } from '@mango/persistence';
import { type Keyring, KeyringError } from '@mango/platform-secrets';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

const MAX_ERROR = 500;
const log = new Logger('webhooks');

/** Delivery attempts (see WebhookActivities). Secrets are opened here and never leave the activity. */
export function createWebhookActivities(deps: {
  dataSource: DataSource;
  sender: WebhookSender;
  /** The keyring that opens signing secrets. Absent: nothing can be signed, so every delivery is abandoned with that reason. */
  keyring: Keyring | null;
}): WebhookActivities {
  const { dataSource, sender, keyring } = deps;

  async function record(
    deliveryId: string,
    webhookId: string,
    attempt: number,
    r: { statusCode: number | null; latencyMs: number; error: string | null },
    state: 'pending' | 'succeeded' | 'failed',
  ): Promise<void> {
    await dataSource.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, attempt, status_code, latency_ms, error, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, now()) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
        [deliveryId, webhookId, attempt, r.statusCode, r.latencyMs, r.error?.slice(0, MAX_ERROR) ?? null],
      );
      await tx.query(
        `UPDATE webhook_deliveries SET attempts = GREATEST(attempts, $2), state = $3,
                completed_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
          WHERE id = $1`,
        [deliveryId, attempt, state],
      );
    });
  }

  return {
    async deliverWebhookAttempt({ deliveryId, attempt, final }): Promise<WebhookAttemptOutcome> {
      const rows: Array<{
        webhook_id: string;
        state: string;
        url: string;
        secrets: StoredWebhookSecret[];
        disabled_at: Date | null;
        deleted_at: Date | null;
        event_id: string;
        event_created_at: Date;
        data: Record<string, unknown>;
      }> = await dataSource.query(
        `SELECT d.webhook_id, d.state, w.url, w.secrets, w.disabled_at, w.deleted_at,
                e.id AS event_id, e.created_at AS event_created_at, e.data
           FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN webhook_events e ON e.id = d.event_id
          WHERE d.id = $1`,
        [deliveryId],
      );
      const row = rows[0];
      if (!row || row.state !== 'pending') return row?.state === 'succeeded' ? 'delivered' : 'abandoned';
      // A retried activity whose attempt was already made and recorded reports it again, without resending.
      const done: Array<{ status_code: number | null; error: string | null }> = await dataSource.query(
        'SELECT status_code, error FROM webhook_delivery_attempts WHERE delivery_id = $1 AND attempt = $2',
        [deliveryId, attempt],
      );
      if (done[0]) return done[0].error === null ? 'delivered' : 'failed';
      const abandon = async (why: string): Promise<WebhookAttemptOutcome> => {
        await record(
          deliveryId,
          row.webhook_id,
          attempt,
          { statusCode: null, latencyMs: 0, error: why },
          'failed',
        );
        return 'abandoned';
      };
      if (row.deleted_at) return abandon('the endpoint was deleted');
      if (row.disabled_at) return abandon('the endpoint is disabled');
      if (!keyring) return abandon('the orchestrator has no keyring (MANGO_KEYRING) to sign with');
      const now = Date.now();
      let secrets: string[];
      try {
        secrets = row.secrets
          .filter((s) => s.expires_at === null || Date.parse(s.expires_at) > now)
          .map(({ expires_at: _, ...sealed }) => openWebhookSecret(keyring, row.webhook_id, sealed));
      } catch (e) {
        if (!(e instanceof KeyringError)) throw e;
        // Sealed for another webhook (a row copied in the database), tampered, or under a missing key:
        // never signed with. Key ids only, in the log and in the delivery's attempt.
        const why = `a signing secret of webhook ${row.webhook_id} cannot be opened (${e.message}); rotate its secret`;
        log.warn(why);
        return abandon(why);
      }
      // The thin payload (docs/api-guide.md, Webhooks), built the same way on every attempt.
      const body = JSON.stringify({
        type: 'event',
        id: row.event_id,
        created_at: new Date(row.event_created_at).toISOString(),
        data: row.data,
      });
      const result = await sender.send({
        url: row.url,
        messageId: row.event_id,
        body,
        secrets,
        timestamp: new Date(),
      });
      if (result.delivered) {
        await record(deliveryId, row.webhook_id, attempt, result, 'succeeded');
        return 'delivered';
      }
      const terminal = final || result.permanent;
      await record(deliveryId, row.webhook_id, attempt, result, terminal ? 'failed' : 'pending');
      return result.permanent ? 'abandoned' : 'failed';
    },
  };
}
