import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DeploymentScheduleReconciler, DeploymentScheduler } from '@mango/feature-deployments';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { OrchestratorEnv } from './orchestrator.env';
import { LOGGER, ORCHESTRATOR_ENV, TEMPORAL } from './temporal-worker.service';
import type { TemporalConnector } from '@mango/platform-temporal';

/**
 * Runs the Deployment Schedule reconciler every `MANGO_DEPLOYMENT_RECONCILE_SECONDS` (first pass at
 * boot). Passes never overlap; a failed pass is logged and the next one retries. Several orchestrators
 * may run it at once: each repair holds the Deployment's row lock.
 */
@Injectable()
export class DeploymentReconcileService implements OnApplicationBootstrap, OnApplicationShutdown {
  private connection?: Connection;
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  private stopped = false;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(TEMPORAL) private readonly temporal: TemporalConnector,
    @Inject(DataSource) private readonly dataSource: DataSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const seconds = this.env.MANGO_DEPLOYMENT_RECONCILE_SECONDS;
    if (seconds === 0) return;
    this.connection = await this.temporal.connectClient();
    const client = new Client({ connection: this.connection, namespace: this.temporal.namespace });
    const reconciler = new DeploymentScheduleReconciler(
      this.dataSource,
      new DeploymentScheduler(client, this.env.MANGO_TASK_QUEUE),
      Math.max(2 * seconds * 1000, 10_000),
      this.log,
    );
    const tick = () => {
      this.pass = reconciler
        .reconcileOnce()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.log.warn({ err: String(err) }, 'deployment schedule reconcile failed; retrying next pass'),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, seconds * 1000);
        });
    };
    tick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
    await this.connection?.close();
  }
}
