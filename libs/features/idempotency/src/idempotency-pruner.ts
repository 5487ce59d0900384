import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { IdempotencyKeys } from '@mango/persistence';
import { drainInBatches, PeriodicPass } from '@mango/platform-periodic';
import { DataSource } from 'typeorm';
import { IDEMPOTENCY_SETTINGS, IdempotencySettings } from './idempotency.settings';

const BATCH = 1_000;

/**
 * Deletes Idempotency-Keys past their retention, every `pruneIntervalMs`, in batches (any number of API
 * processes may prune at once: each batch is one DELETE). Expired rows are never replayed anyway (the
 * read checks `expires_at`); pruning only keeps the table small.
 */
@Injectable()
export class IdempotencyPruner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('idempotency');
  private readonly periodic: PeriodicPass<number>;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
  ) {
    this.periodic = new PeriodicPass({
      intervalMs: settings.pruneIntervalMs,
      pass: () => this.pruneAll(new Date()),
      onError: (err) => this.log.warn(`idempotency key pruning failed: ${String(err)}`),
    });
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** Deletes every key expired at `now`; returns how many. */
  async pruneAll(now: Date): Promise<number> {
    return drainInBatches((batch) => IdempotencyKeys.prune(this.dataSource, now, batch), BATCH);
  }
}
