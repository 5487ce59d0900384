import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PeriodicPass } from '@mango/platform-periodic';
import { FileObjects } from './file-objects';
import { FILES_SETTINGS, FilesSettings } from './files.settings';
import { ObjectCleanupRepository } from './object-cleanup.repository';

export interface SweepResult {
  /** Objects removed (or found already gone) and their intents deleted. */
  removed: number;
  /** Intents whose key a File still uses: dropped, object kept. */
  kept: number;
  /** Claimed but not finished (the store failed): retried after the sweeper's own lease. */
  failed: number;
}

const BATCH = 100;

/**
 * Finishes cleanup intents nobody holds anymore: uploads and deletes whose process died, or whose
 * object removal failed. Runs every `sweepIntervalMs` in each apps/files process; any number of
 * sweepers can run at once (claims are `FOR UPDATE SKIP LOCKED` with a fresh owner per claim).
 */
@Injectable()
export class ObjectCleanupSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('files');
  private readonly periodic: PeriodicPass<SweepResult>;

  constructor(
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(FILES_SETTINGS) private readonly settings: FilesSettings,
  ) {
    this.periodic = new PeriodicPass({
      intervalMs: settings.sweepIntervalMs,
      pass: () => this.sweep(),
      onError: (err) => this.log.warn(`object cleanup sweep failed: ${String(err)}`),
    });
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** Claims and finishes every due intent (in batches) and reports what happened. */
  sweepOnce(): Promise<SweepResult> {
    return this.periodic.runOnce();
  }

  private async sweep(): Promise<SweepResult> {
    const result: SweepResult = { removed: 0, kept: 0, failed: 0 };
    for (;;) {
      const claimed = await this.cleanups.claimExpired({
        leaseMs: this.settings.leaseMs,
        graceMs: this.settings.sweepGraceMs,
        limit: BATCH,
      });
      for (const c of claimed) {
        try {
          if (c.inUse) {
            this.log.error(
              `cleanup intent ${c.lease.id} names the object of a live File; keeping the object`,
            );
            await this.cleanups.release(c.lease);
            result.kept++;
            continue;
          }
          await this.objects.remove(c.objectKey);
          await this.cleanups.release(c.lease);
          result.removed++;
        } catch (err) {
          result.failed++;
          this.log.warn(`cleanup of ${c.objectKey} failed, retrying later: ${String(err)}`);
        }
      }
      if (claimed.length < BATCH) break;
    }
    if (result.removed + result.kept + result.failed > 0)
      this.log.log(`object cleanup sweep: ${JSON.stringify(result)}`);
    return result;
  }
}
