import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar';
import { DataSource } from 'typeorm';
import { FileObjects } from '../file-objects';
import { insertSkillTexts, readSkillTexts } from './skill-texts';

/** A Skill version whose kept text rows are missing (uploaded before Mango kept them). */
interface MissingTexts {
  skill_id: string;
  version: number;
  directory: string;
  object_key: string;
}

const BATCH = 100;

/**
 * Fills `skill_version_files` for Skill versions uploaded before Mango kept their text (migration
 * CreateSkillVersionFiles), from each version's own archive in the object store, so that their activation
 * works like a new upload's. Runs once in the background when apps/files starts; idempotent and safe in
 * any number of processes (each version's rows are inserted under its row lock, only while none exist).
 * A version whose archive cannot be read is logged and left as it was (its activation keeps saying so).
 */
@Injectable()
export class SkillTextsBackfill implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('skills');
  private running?: Promise<number>;
  private stopped = false;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(FileObjects) private readonly objects: FileObjects,
  ) {}

  onApplicationBootstrap(): void {
    this.running = this.runOnce().catch((err) => {
      this.log.warn(`Skill text backfill stopped: ${String(err)}`);
      return 0;
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Backfills every version that needs it; resolves with how many were filled here. */
  async runOnce(): Promise<number> {
    let filled = 0;
    let after: [string, number] = ['', 0];
    for (;;) {
      const batch: MissingTexts[] = await this.dataSource.query(
        `SELECT v.skill_id, v.version, v.directory, v.object_key FROM skill_versions v
          WHERE (v.skill_id, v.version) > ($1, $2)
            AND NOT EXISTS (SELECT 1 FROM skill_version_files f
                             WHERE f.skill_id = v.skill_id AND f.version = v.version)
          ORDER BY v.skill_id, v.version LIMIT ${BATCH}`,
        after,
      );
      for (const v of batch) {
        if (this.stopped) return filled;
        try {
          if (await this.fill(v)) filled++;
        } catch (err) {
          this.log.warn(
            `Skill ${v.skill_id} version ${v.version}: its text was not backfilled: ${String(err)}`,
          );
        }
      }
      if (batch.length < BATCH) break;
      const last = batch[batch.length - 1]!;
      after = [last.skill_id, last.version];
    }
    if (filled) this.log.log(`kept the text files of ${filled} earlier Skill version(s)`);
    return filled;
  }

  /** Reads one version's archive and inserts its rows, unless another process already did. */
  private async fill(v: MissingTexts): Promise<boolean> {
    const root = await mkdtemp(join(tmpdir(), 'mango-skill-backfill-'));
    try {
      await pipeline(await this.objects.open(v.object_key), extract({ cwd: root, strict: true }));
      const paths = (await readdir(root, { recursive: true, withFileTypes: true }))
        .filter((d) => d.isFile())
        .map((d) => relative(root, join(d.parentPath, d.name)));
      const texts = await readSkillTexts(root, paths, v.directory);
      return await this.dataSource.transaction(async (tx) => {
        const [row] = await tx.query(
          `SELECT 1 FROM skill_versions WHERE skill_id = $1 AND version = $2 FOR UPDATE`,
          [v.skill_id, v.version],
        );
        if (!row) return false; // deleted meanwhile
        const [{ n }] = await tx.query(
          'SELECT count(*)::int AS n FROM skill_version_files WHERE skill_id = $1 AND version = $2',
          [v.skill_id, v.version],
        );
        if (n > 0) return false;
        await insertSkillTexts(tx, v.skill_id, v.version, texts);
        return true;
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
}
