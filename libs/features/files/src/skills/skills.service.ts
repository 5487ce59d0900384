import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { invalidRequest, notFound, permissionDenied } from '@mango/domain-kernel';
import { requireLiveToken, type Principal } from '@mango/feature-auth';
import { SkillEntity, SkillVersionEntity } from '@mango/persistence';
import { isId } from '@mango/platform-ids';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import { DataSource, EntityManager } from 'typeorm';
import { FileObjects, isMissingObject } from '../file-objects';
import { FILES_SETTINGS, FilesSettings } from '../files.settings';
import { CleanupLease, ObjectCleanupRepository } from '../object-cleanup.repository';
import { renderSkill, renderSkillVersion, SkillVersionView, SkillView } from './skill.view';

const SKILLS_CURSOR = { scope: 'skills', order: 'desc' as const };
const versionsCursor = (skillId: string) => ({ scope: `skill_versions:${skillId}`, order: 'desc' as const });
const VERSION = /^[1-9][0-9]{0,8}$/;

/** Parses a `{version}` path segment: a version number; anything else (`latest` included) is 404. */
export function parseVersionParam(skillId: string, raw: string): number {
  if (!VERSION.test(raw)) throw notFound('skill version', `${skillId}/${raw}`);
  return Number(raw);
}

/** An archive whose row is gone, covered by a held cleanup lease. */
export interface DetachedArchive {
  objectKey: string;
  lease: CleanupLease;
}

interface PinnedVersion {
  skill_id: string;
  version: string;
}

/**
 * Reading and deleting Skills within the caller's Workspace. A Work token reads only the versions its
 * Session froze (the primary Agent's pins and those of roster Agents): anything else is 404.
 */
@Injectable()
export class SkillsService {
  private readonly log = new Logger('skills');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(FILES_SETTINGS) private readonly settings: FilesSettings,
  ) {}

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<SkillView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'source']);
    const limit = parseLimit(query.limit);
    if (query.source !== undefined && query.source !== 'custom' && query.source !== 'anthropic')
      throw invalidRequest('source must be "custom" or "anthropic"');
    // Mango has no Anthropic-provided Skills.
    if (query.source === 'anthropic') return { data: [], next_page: null };
    const qb = this.dataSource.manager
      .createQueryBuilder(SkillEntity, 's')
      .where('s.workspace_id = :workspaceId', { workspaceId })
      .orderBy('s.id', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string')
      qb.andWhere('s.id < :after', { after: decodeCursor(query.page, SKILLS_CURSOR).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (s) => s.id, renderSkill, SKILLS_CURSOR);
  }

  async get(workspaceId: string, skillId: string): Promise<SkillView> {
    return renderSkill(await this.findSkill(workspaceId, skillId));
  }

  async listVersions(
    workspaceId: string,
    skillId: string,
    query: Record<string, unknown>,
  ): Promise<Page<SkillVersionView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    await this.findSkill(workspaceId, skillId);
    const qb = this.dataSource.manager
      .createQueryBuilder(SkillVersionEntity, 'v')
      .where('v.skill_id = :skillId AND v.workspace_id = :workspaceId', { skillId, workspaceId })
      .orderBy('v.version', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string') {
      const after = decodeCursor(query.page, versionsCursor(skillId)).after;
      if (!VERSION.test(after)) throw invalidRequest('page is not a valid page cursor');
      qb.andWhere('v.version < :after', { after: Number(after) });
    } else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(
      await qb.getMany(),
      limit,
      (v) => String(v.version),
      renderSkillVersion,
      versionsCursor(skillId),
    );
  }

  async getVersion(p: Principal, skillId: string, rawVersion: string): Promise<SkillVersionView> {
    return renderSkillVersion(await this.findVersion(p, skillId, rawVersion));
  }

  /** The version and a stream of its archive. A version deleted in the meantime is 404. */
  async openVersion(
    p: Principal,
    skillId: string,
    rawVersion: string,
  ): Promise<{ version: SkillVersionEntity; body: Readable }> {
    const version = await this.findVersion(p, skillId, rawVersion);
    try {
      return { version, body: await this.objects.open(version.objectKey) };
    } catch (err) {
      if (isMissingObject(err)) {
        const still = await this.dataSource.manager.exists(SkillVersionEntity, {
          where: { skillId, version: version.version },
        });
        if (!still) throw notFound('skill version', `${skillId}/${rawVersion}`);
      }
      throw err;
    }
  }

  /** Deletes one version; the Skill's `latest_version` falls back to the highest remaining one. */
  async deleteVersion(
    workspaceId: string,
    skillId: string,
    rawVersion: string,
  ): Promise<{ id: string; type: 'skill_version_deleted' }> {
    if (!isId('skill', skillId)) throw notFound('skill', skillId);
    const version = parseVersionParam(skillId, rawVersion);
    const detached = await this.dataSource.transaction(async (tx) => {
      const rows: Array<{ object_key: string }> = await tx.query(
        `WITH gone AS (
           DELETE FROM skill_versions WHERE skill_id = $1 AND version = $2 AND workspace_id = $3
           RETURNING object_key)
         SELECT object_key FROM gone`,
        [skillId, version, workspaceId],
      );
      if (rows.length === 0) throw notFound('skill version', `${skillId}/${rawVersion}`);
      await tx.query(
        `UPDATE skills SET updated_at = now(),
                latest_version = (SELECT max(version) FROM skill_versions WHERE skill_id = $1)
          WHERE id = $1`,
        [skillId],
      );
      return this.registerDeletes(tx, rows);
    });
    await this.removeObjects(detached);
    return { id: String(version), type: 'skill_version_deleted' };
  }

  /** Deletes the Skill and every version; their archives go after the commit (or via the sweeper). */
  async deleteSkill(workspaceId: string, skillId: string): Promise<{ id: string; type: 'skill_deleted' }> {
    await this.removeObjects(await this.detachSkill(workspaceId, skillId));
    return { id: skillId, type: 'skill_deleted' };
  }

  /** Step 1 of a Skill delete: the rows go and leased intents for their archives appear, atomically. */
  async detachSkill(workspaceId: string, skillId: string): Promise<DetachedArchive[]> {
    if (!isId('skill', skillId)) throw notFound('skill', skillId);
    return this.dataSource.transaction(async (tx) => {
      const locked: unknown[] = await tx.query(
        'SELECT 1 FROM skills WHERE id = $1 AND workspace_id = $2 FOR UPDATE',
        [skillId, workspaceId],
      );
      if (locked.length === 0) throw notFound('skill', skillId);
      const rows: Array<{ object_key: string }> = await tx.query(
        `WITH gone AS (DELETE FROM skill_versions WHERE skill_id = $1 RETURNING object_key)
         SELECT object_key FROM gone`,
        [skillId],
      );
      await tx.query('DELETE FROM skills WHERE id = $1', [skillId]);
      return this.registerDeletes(tx, rows);
    });
  }

  private async registerDeletes(
    tx: EntityManager,
    rows: Array<{ object_key: string }>,
  ): Promise<DetachedArchive[]> {
    const out: DetachedArchive[] = [];
    for (const r of rows) {
      const lease = await this.cleanups.register(tx, {
        objectKey: r.object_key,
        reason: 'delete',
        leaseMs: this.settings.leaseMs,
      });
      out.push({ objectKey: r.object_key, lease });
    }
    return out;
  }

  /** Step 2: remove each archive, then its intent; on failure the sweeper finishes later. */
  async removeObjects(detached: DetachedArchive[]): Promise<void> {
    for (const d of detached) {
      try {
        await this.objects.remove(d.objectKey);
        await this.cleanups.release(d.lease);
      } catch (err) {
        this.log.warn(`removing Skill archive ${d.objectKey} is left to the sweeper: ${String(err)}`);
      }
    }
  }

  private async findSkill(workspaceId: string, skillId: string): Promise<SkillEntity> {
    if (!isId('skill', skillId)) throw notFound('skill', skillId);
    const skill = await this.dataSource.manager.findOne(SkillEntity, { where: { id: skillId, workspaceId } });
    if (!skill) throw notFound('skill', skillId);
    return skill;
  }

  private async findVersion(p: Principal, skillId: string, rawVersion: string): Promise<SkillVersionEntity> {
    if (!isId('skill', skillId)) throw notFound('skill', skillId);
    const version = parseVersionParam(skillId, rawVersion);
    if (p.kind === 'work') await this.assertPinned(p, skillId, version);
    const row = await this.dataSource.manager.findOne(SkillVersionEntity, {
      where: { skillId, version, workspaceId: p.workspaceId },
    });
    if (!row) throw notFound('skill version', `${skillId}/${rawVersion}`);
    return row;
  }

  /** A Work token reads exactly its Session's frozen pins; a dead token is 401, others 404. */
  private async assertPinned(p: Extract<Principal, { kind: 'work' }>, skillId: string, version: number) {
    requireLiveToken(p);
    if (p.sessionId === null) throw permissionDenied('a healthcheck Work token may not read Skills');
    const pins = await sessionSkillPins(this.dataSource, p.workspaceId, p.sessionId);
    if (!pins.some((pin) => pin.skill_id === skillId && pin.version === String(version)))
      throw notFound('skill version', `${skillId}/${version}`);
  }
}

/**
 * The concrete Skill versions a Session froze: its Agent snapshot's `skills`, plus the `skills` of the
 * roster Agent versions its snapshot names (numeric versions only; `latest` is never a frozen pin).
 */
export async function sessionSkillPins(
  dataSource: DataSource,
  workspaceId: string,
  sessionId: string,
): Promise<PinnedVersion[]> {
  const [row]: Array<{ agent: { skills?: PinnedVersion[]; multiagent?: { agents?: unknown[] } | null } }> =
    await dataSource.query(
      'SELECT agent FROM sessions WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL',
      [sessionId, workspaceId],
    );
  if (!row) return [];
  const pins: PinnedVersion[] = [...(row.agent.skills ?? [])];
  const roster = (row.agent.multiagent?.agents ?? []).filter(
    (a): a is { type: 'agent'; id: string; version: number; skills?: PinnedVersion[] } =>
      typeof a === 'object' && a !== null && (a as { type?: unknown }).type === 'agent',
  );
  for (const a of roster) {
    // Sessions freeze each roster Agent (with its Skill versions) into the snapshot; a snapshot that
    // only names the roster version falls back to that version's definition.
    if (Array.isArray(a.skills)) {
      pins.push(...a.skills);
      continue;
    }
    const [v]: Array<{ definition: { skills?: PinnedVersion[] } }> = await dataSource.query(
      'SELECT definition FROM agent_versions WHERE agent_id = $1 AND version = $2',
      [a.id, a.version],
    );
    pins.push(...(v?.definition.skills ?? []));
  }
  return pins
    .filter((pin) => VERSION.test(String(pin.version)))
    .map((pin) => ({
      skill_id: pin.skill_id,
      version: String(pin.version),
    }));
}
