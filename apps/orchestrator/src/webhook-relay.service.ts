import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { webhookDeliveryWorkflow } from '@mango/workflows';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import { WakeLoop, WEBHOOK_DELIVERIES_CHANNEL, WebhookDeliveryRepository } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { OrchestratorEnv } from './orchestrator.env';
import { LOGGER, ORCHESTRATOR_ENV, TEMPORAL } from './temporal-worker.service';
import type { TemporalConnector } from '@mango/platform-temporal';

const BATCH = 100;
const SWEEP_MS = 1000;

/**
 * The webhook outbox relay: pending `webhook_deliveries` rows (written in the transaction of the change
 * they announce) are claimed FOR UPDATE SKIP LOCKED, each starts its delivery workflow (workflow id =
 * delivery id, so a second start is a no-op) and is marked dispatched in the same transaction. A crash
 * anywhere before the commit leaves the row pending for the next pass: at least once.
 */
@Injectable()
export class WebhookRelayService implements OnApplicationBootstrap, OnApplicationShutdown {
  private loop?: WakeLoop;
  private connection?: Connection;
  private client?: Client;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(TEMPORAL) private readonly temporal: TemporalConnector,
    @Inject(WebhookDeliveryRepository) private readonly deliveries: WebhookDeliveryRepository,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.connection = await this.temporal.connectClient();
    this.client = new Client({ connection: this.connection, namespace: this.temporal.namespace });
    this.loop = new WakeLoop({
      url: this.env.MANGO_DATABASE_URL,
      channel: WEBHOOK_DELIVERIES_CHANNEL,
      applicationName: 'mango-webhook-relay',
      sweepMs: SWEEP_MS,
      pass: () => this.drain(),
      onPassError: (err) => {
        this.metrics.backgroundLoop('webhook_relay', 'failing');
        this.log.error({ err: String(err) }, 'webhook relay pass failed; retrying on the next wake-up');
      },
      onRecovered: () => {
        this.metrics.backgroundLoop('webhook_relay', 'recovered');
        this.log.info('webhook relay recovered: passes succeed again');
      },
    });
    this.metrics.backgroundLoop('webhook_relay', 'running');
    await this.loop.start();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const relayed = await this.deliveries.dispatchBatch(BATCH, async (deliveryId) => {
        try {
          await this.client!.workflow.start(webhookDeliveryWorkflow, {
            workflowId: deliveryId,
            taskQueue: this.env.MANGO_TASK_QUEUE,
            args: [{ deliveryId, retryBaseMs: this.env.MANGO_WEBHOOK_RETRY_BASE_MS }],
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      });
      if (relayed < BATCH) return;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
    await this.connection?.close();
  }
}
