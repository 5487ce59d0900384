import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { AuditLog } from '@mango/persistence';
import { drainInBatches, PeriodicPass } from '@mango/platform-periodic';
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
  private readonly periodic: PeriodicPass<number>;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(AUDIT_SETTINGS) private readonly settings: AuditSettings,
  ) {
    this.periodic = new PeriodicPass({
      intervalMs: settings.pruneIntervalMs,
      pass: () => this.pruneAll(new Date()),
      onError: (err) => this.log.warn(`audit log pruning failed: ${String(err)}`),
    });
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** Deletes every row older than the retention at `now`; returns how many. */
  async pruneAll(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.settings.retentionMs);
    return drainInBatches((batch) => AuditLog.prune(this.dataSource, before, batch), BATCH);
  }
}
