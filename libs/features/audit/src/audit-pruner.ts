import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { AuditLog } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { AUDIT_SETTINGS, AuditSettings } from './audit.env';

const BATCH = 1_000;

/**
 * Deletes audit rows older than the retention, every `pruneIntervalMs`, in batches (any number of
 * processes may prune at once: rows another batch holds are skipped).
 */
@Injectable()
export class AuditPruner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('audit');
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(AUDIT_SETTINGS) private readonly settings: AuditSettings,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.pruneIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.pruneOnce().catch((err) => this.log.warn(`audit log pruning failed: ${String(err)}`));
    }, this.settings.pruneIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Deletes every row older than the retention at `now`; returns how many. */
  pruneOnce(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.settings.retentionMs);
    const run = (async () => {
      let total = 0;
      for (;;) {
        const n = await AuditLog.prune(this.dataSource, before, BATCH);
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
