import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DomainError, ErrorCode, notFound } from '@mango/domain-kernel';
import { UploadIdempotency, uploadIdempotencyOf } from '@mango/feature-idempotency';
import { insertRow, SkillEntity, SkillVersionEntity } from '@mango/persistence';
import { isId, newId } from '@mango/platform-ids';
import { DataSource, EntityManager } from 'typeorm';
import { FileObjects } from '../file-objects';
import { FILES_SETTINGS, FilesSettings } from '../files.settings';
import { CleanupLeaseKeeper, LeaseLostError } from '../cleanup-lease-keeper';
import { CleanupLease, ObjectCleanupRepository } from '../object-cleanup.repository';
import { packSkillArchive, SKILL_ARCHIVE_CONTENT_TYPE } from './skill-archive';
import { bundleTooLarge, checkBundleLayout, parseSkillMd, SkillFrontmatter } from './skill-bundle';
import { readSkillForm, SkillForm } from './skill-form';
import { insertSkillTexts, readSkillTexts, SkillText } from './skill-texts';
import { renderSkill, renderSkillVersion, SkillVersionView, SkillView } from './skill.view';
import { SKILLS_SETTINGS, SkillsSettings } from './skills.settings';

/** Where a Skill version's archive lives: under its Workspace's prefix, a fresh name per upload. */
export const skillObjectKey = (workspaceId: string, skillId: string): string =>
  `workspaces/${workspaceId}/skills/${skillId}/${randomUUID()}.tar.gz`;

/** A validated bundle whose archive is in the object store, not yet committed. */
export interface StoredArchive {
  objectKey: string;
  lease: CleanupLease;
  meta: SkillFrontmatter & { directory: string; expandedBytes: number; fileCount: number };
  sizeBytes: number;
  sha256: string;
  /** The version's kept text files (skill-texts.ts), inserted with the version. */
  texts: SkillText[];
  /** Renews the lease until the commit has run (a commit a loaded database delays stays ours). */
  keeper: CleanupLeaseKeeper;
}

/**
 * `POST /v1/skills` and `POST /v1/skills/{id}/versions`. The bundle is received into a temporary
 * directory and validated completely (paths, layout, SKILL.md frontmatter, limits) before anything is
 * recorded; then the Files upload protocol: a leased cleanup intent is committed before the archive is
 * written (streamed, gzip tar, length and SHA-256 computed on the way), and one transaction deletes the
 * intent — only while the lease is ours — and inserts the version. Any failure removes the object and
 * the intent; a crash leaves the intent for the sweeper.
 */
@Injectable()
export class UploadSkill {
  private readonly log = new Logger('skills');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(FILES_SETTINGS) private readonly files: FilesSettings,
    @Inject(SKILLS_SETTINGS) private readonly settings: SkillsSettings,
  ) {}

  /** Creates a Skill with its first version. */
  async createSkill(workspaceId: string, req: IncomingMessage): Promise<SkillView> {
    const now = new Date();
    const skillId = newId('skill', now.getTime());
    const form = await this.receive(req, true);
    try {
      const stored = await this.store(workspaceId, skillId, form);
      return await this.keyed(uploadIdempotencyOf(req), stored, form, async () => {
        const skill = await this.commit(stored, async (tx) => {
          const row = tx.create(SkillEntity, {
            id: skillId,
            workspaceId,
            displayTitle: form.displayTitle,
            latestVersion: 1,
            nextVersion: 2,
            createdAt: now,
            updatedAt: now,
          });
          await insertRow(tx, SkillEntity, row);
          await insertRow(tx, SkillVersionEntity, this.versionRow(workspaceId, skillId, 1, stored, now));
          await insertSkillTexts(tx, skillId, 1, stored.texts);
          return row;
        });
        return renderSkill(skill);
      });
    } finally {
      await form.dispose();
    }
  }

  /** Adds the next version to an existing Skill of the Workspace (404 otherwise). */
  async createVersion(workspaceId: string, skillId: string, req: IncomingMessage): Promise<SkillVersionView> {
    if (!isId('skill', skillId) || !(await this.skillExists(workspaceId, skillId)))
      throw notFound('skill', skillId);
    const form = await this.receive(req, false);
    try {
      const stored = await this.store(workspaceId, skillId, form);
      return await this.keyed(uploadIdempotencyOf(req), stored, form, async () => {
        const version = await this.commit(stored, async (tx) => {
          const now = new Date();
          const [row]: Array<{ version: number }> = await tx.query(
            `WITH bumped AS (
             UPDATE skills SET next_version = next_version + 1, latest_version = next_version, updated_at = $3
              WHERE id = $1 AND workspace_id = $2
             RETURNING next_version - 1 AS version)
           SELECT version FROM bumped`,
            [skillId, workspaceId, now],
          );
          // Deleted while the bundle was being stored.
          if (!row) throw notFound('skill', skillId);
          const v = this.versionRow(workspaceId, skillId, row.version, stored, now);
          await insertRow(tx, SkillVersionEntity, v);
          await insertSkillTexts(tx, skillId, row.version, stored.texts);
          return v;
        });
        return renderSkillVersion(version);
      });
    } finally {
      await form.dispose();
    }
  }

  /**
   * With an Idempotency-Key (docs/api-guide.md, "Idempotent requests"), the commit runs in one transaction
   * with the key's lock, read and record; the request is identified by its display title and the stored
   * archive's length and SHA-256 (the archive is deterministic: sorted members, no mtimes, portable), not
   * by the multipart framing. A repeat (replayed), another request under the key (409) or a key still in
   * use (409) never reaches the commit: its own archive and intent are removed as after any failure.
   */
  private async keyed<T>(
    idempotency: UploadIdempotency | undefined,
    stored: StoredArchive,
    form: SkillForm,
    commit: () => Promise<T>,
  ): Promise<T> {
    if (!idempotency) return commit();
    let committing = false;
    const parts = {
      display_title: form.displayTitle,
      archive_sha256: stored.sha256,
      archive_bytes: stored.sizeBytes,
    };
    try {
      return await idempotency.commit(parts, () => {
        committing = true;
        return commit();
      });
    } catch (err) {
      if (!committing) {
        await stored.keeper.stop();
        await this.abandon(stored.objectKey, stored.lease);
      }
      throw err;
    }
  }

  private skillExists(workspaceId: string, skillId: string): Promise<boolean> {
    return this.dataSource.manager.exists(SkillEntity, { where: { id: skillId, workspaceId } });
  }

  private async receive(req: IncomingMessage, allowDisplayTitle: boolean): Promise<SkillForm> {
    const form = await readSkillForm(req, {
      maxBytes: this.settings.maxBytes,
      maxFiles: this.settings.maxFiles,
      allowDisplayTitle,
    });
    try {
      checkBundleLayout(form.paths);
      parseSkillMd(form.skillMd ?? Buffer.alloc(0));
      return form;
    } catch (e) {
      await form.dispose();
      throw e;
    }
  }

  /** Steps 1 and 2: the leased intent, then the archive streamed into the object store. */
  async store(workspaceId: string, skillId: string, form: SkillForm): Promise<StoredArchive> {
    const directory = checkBundleLayout(form.paths);
    const front = parseSkillMd(form.skillMd!);
    const texts = await readSkillTexts(form.root, form.paths, directory);
    const objectKey = skillObjectKey(workspaceId, skillId);
    const lease = await this.cleanups.register(this.dataSource.manager, {
      objectKey,
      reason: 'upload',
      leaseMs: this.files.leaseMs,
    });
    const keeper = new CleanupLeaseKeeper(this.cleanups, lease, this.files.leaseMs, this.log);
    try {
      const archive = packSkillArchive(form.root, form.paths);
      let written: number;
      try {
        written = await this.objects.write(objectKey, archive.stream, {
          contentType: SKILL_ARCHIVE_CONTENT_TYPE,
          maxBytes: this.settings.maxBytes,
          signal: keeper.signal,
        });
      } catch (err) {
        throw keeper.signal.aborted
          ? keeper.signal.reason
          : isTooLarge(err)
            ? bundleTooLarge(this.settings.maxBytes)
            : err;
      }
      const { sizeBytes, sha256 } = archive.digest();
      if (sizeBytes !== written)
        throw new Error(`archive length mismatch: ${sizeBytes} hashed, ${written} written`);
      return {
        keeper,
        objectKey,
        lease,
        meta: { ...front, directory, expandedBytes: form.expandedBytes, fileCount: form.paths.length },
        sizeBytes,
        sha256,
        texts,
      };
    } catch (err) {
      await keeper.stop();
      await this.abandon(objectKey, lease);
      throw err;
    }
  }

  /** Step 3: the row(s) and the end of the intent commit together, only while the lease is ours. */
  async commit<T>(stored: StoredArchive, insert: (tx: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource
        .transaction(async (tx) => {
          if (!(await this.cleanups.release(stored.lease, tx))) throw new LeaseLostError(stored.lease);
          return insert(tx);
        })
        .finally(() => stored.keeper.stop());
    } catch (err) {
      await this.abandon(stored.objectKey, stored.lease);
      throw err;
    }
  }

  private versionRow(
    workspaceId: string,
    skillId: string,
    version: number,
    stored: StoredArchive,
    createdAt: Date,
  ): SkillVersionEntity {
    return this.dataSource.manager.create(SkillVersionEntity, {
      skillId,
      version,
      workspaceId,
      name: stored.meta.name,
      description: stored.meta.description,
      directory: stored.meta.directory,
      objectKey: stored.objectKey,
      archiveSizeBytes: stored.sizeBytes,
      archiveSha256: stored.sha256,
      expandedSizeBytes: stored.meta.expandedBytes,
      fileCount: stored.meta.fileCount,
      createdAt,
    });
  }

  /** Same as Files: remove what was written and the intent; if the lease was taken, cover it anew. */
  private async abandon(objectKey: string, lease: CleanupLease): Promise<void> {
    try {
      let held = lease;
      if (!(await this.cleanups.renew(held, this.files.leaseMs))) {
        held = await this.cleanups.register(this.dataSource.manager, {
          objectKey,
          reason: 'upload',
          leaseMs: this.files.leaseMs,
        });
      }
      await this.objects.remove(objectKey);
      await this.cleanups.release(held);
    } catch (err) {
      this.log.warn(`cleanup of failed Skill upload ${objectKey} is left to the sweeper: ${String(err)}`);
    }
  }
}

const isTooLarge = (e: unknown) => e instanceof DomainError && e.code === ErrorCode.TooLarge;
