import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { IdempotencyKeys } from '@mango/persistence';
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
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.pruneIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.pruneOnce().catch((err) => this.log.warn(`idempotency key pruning failed: ${String(err)}`));
    }, this.settings.pruneIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Deletes every key expired at `now`; returns how many. */
  pruneOnce(now = new Date()): Promise<number> {
    const run = (async () => {
      let total = 0;
      for (;;) {
        const n = await IdempotencyKeys.prune(this.dataSource, now, BATCH);
        total += n;
        if (n < BATCH) return total;
      }
    })().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }
}
