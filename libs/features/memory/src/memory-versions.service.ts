import { Inject, Injectable, Logger } from '@nestjs/common';
import { conflict, invalidRequest, notFound } from '@mango/domain-kernel';
import type { Principal } from '@mango/feature-auth';
import { ObjectCleanupRepository } from '@mango/feature-files';
import { isId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseLimit,
  parseTimeRange,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import { MemoryEntity, MemoryVersionEntity } from '@mango/persistence';
import { DataSource, EntityManager } from 'typeorm';
import { actorFor, MemoryAccess } from './memory-access';
import { readView } from './memory-errors';
import { MemoryObjects } from './memory-objects';
import { MEMORY_SETTINGS, MemorySettings } from './memory.settings';
import { MemoryVersionView, renderMemoryVersion } from './memory.views';

const OPERATIONS = ['created', 'modified', 'deleted'];

/** A Store's version history: list (newest first), get, and redaction. Workspace keys only. */
@Injectable()
export class MemoryVersionsService {
  private readonly log = new Logger('memory');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MemoryAccess) private readonly access: MemoryAccess,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(MemoryObjects) private readonly objects: MemoryObjects,
    @Inject(MEMORY_SETTINGS) private readonly settings: MemorySettings,
  ) {}

  async list(
    p: Principal,
    storeId: string,
    query: Record<string, unknown>,
  ): Promise<Page<MemoryVersionView>> {
    rejectUnknownQuery(query, [
      'limit',
      'page',
      'memory_id',
      'operation',
      'session_id',
      'api_key_id',
      'service_account_id',
      'created_at',
      'view',
    ]);
    const view = readView(query.view, 'basic');
    const limit = parseLimit(query.limit, view === 'full' ? 20 : undefined);
    const store = await this.access.store(this.dataSource.manager, p, storeId);
    const scope = `memory_versions:${store.id}`;
    const qb = this.dataSource.manager
      .createQueryBuilder(MemoryVersionEntity, 'v')
      .where('v.memory_store_id = :storeId', { storeId: store.id })
      .orderBy('v.id', 'DESC')
      .limit(limit + 1);
    const text = (name: string): string | undefined => {
      const v = query[name];
      if (v === undefined) return undefined;
      if (typeof v !== 'string' || v.length === 0) throw invalidRequest(`${name} must be a string`);
      return v;
    };
    const memoryId = text('memory_id');
    if (memoryId !== undefined) qb.andWhere('v.memory_id = :memoryId', { memoryId });
    const operation = text('operation');
    if (operation !== undefined) {
      if (!OPERATIONS.includes(operation))
        throw invalidRequest('operation must be created, modified or deleted');
      qb.andWhere('v.operation = :operation', { operation });
    }
    const sessionId = text('session_id');
    if (sessionId !== undefined)
      qb.andWhere("v.created_by_type = 'session_actor' AND v.created_by_id = :sessionId", { sessionId });
    const apiKeyId = text('api_key_id');
    if (apiKeyId !== undefined)
      qb.andWhere("v.created_by_type = 'api_actor' AND v.created_by_id = :apiKeyId", { apiKeyId });
    // Mango has no service accounts: the filter is accepted and matches nothing.
    if (text('service_account_id') !== undefined) qb.andWhere('false');
    const range = parseTimeRange(query.created_at, 'created_at', ['gte', 'lte']);
    if (range.gte) qb.andWhere('v.created_at >= :gte', { gte: range.gte });
    if (range.lte) qb.andWhere('v.created_at <= :lte', { lte: range.lte });
    if (typeof query.page === 'string')
      qb.andWhere('v.id < :after', { after: decodeCursor(query.page, { scope, order: 'desc' }).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await qb.getMany();
    const page = toPage(
      rows,
      limit,
      (v) => v.id,
      (v) => v,
      { scope, order: 'desc' },
    );
    const data: MemoryVersionView[] = [];
    for (const v of page.data)
      data.push(renderMemoryVersion(v, view === 'full' ? await this.content(v) : null));
    return { data, next_page: page.next_page };
  }

  async get(p: Principal, storeId: string, versionId: string, query: Record<string, unknown>) {
    rejectUnknownQuery(query, ['view']);
    const view = readView(query.view, 'full');
    const store = await this.access.store(this.dataSource.manager, p, storeId);
    const v = await this.find(this.dataSource.manager, store.id, versionId);
    return renderMemoryVersion(v, view === 'full' ? await this.content(v) : null);
  }

  /**
   * Clears a version's content, path, digest and size (idempotent), keeping actor and timestamps. The
   * version a live Memory currently shows cannot be redacted (409): change or delete the Memory first.
   * The content object goes when no other version or Memory names it: its cleanup intent is recorded in
   * the redacting transaction, the object removed right after (or by the sweeper).
   */
  async redact(p: Principal, storeId: string, versionId: string): Promise<MemoryVersionView> {
    const actor = actorFor(p);
    const { version, lease } = await this.dataSource.transaction(async (tx) => {
      const store = await this.access.store(tx, p, storeId, { lock: true });
      const v = await this.find(tx, store.id, versionId);
      if (v.redactedAt) return { version: v, lease: undefined };
      if (await tx.exists(MemoryEntity, { where: { memoryVersionId: v.id } }))
        throw conflict(
          `${v.id} is the current version of memory ${v.memoryId}; update or delete the memory first`,
        );
      const now = new Date();
      const redacted: MemoryVersionEntity = {
        ...v,
        path: null,
        contentSha256: null,
        contentSizeBytes: null,
        objectKey: null,
        redactedAt: now,
        redactedByType: 'api_actor',
        redactedById: actor.id,
      };
      await tx.update(
        MemoryVersionEntity,
        { id: v.id },
        {
          path: null,
          contentSha256: null,
          contentSizeBytes: null,
          objectKey: null,
          redactedAt: now,
          redactedByType: 'api_actor',
          redactedById: actor.id,
        },
      );
      let lease;
      if (v.objectKey) {
        const [{ used }]: Array<{ used: boolean }> = await tx.query(
          `SELECT EXISTS (SELECT 1 FROM memory_versions WHERE object_key = $1)
               OR EXISTS (SELECT 1 FROM memories WHERE object_key = $1) AS used`,
          [v.objectKey],
        );
        if (!used)
          lease = {
            key: v.objectKey,
            lease: await this.cleanups.register(tx, {
              objectKey: v.objectKey,
              reason: 'delete',
              leaseMs: this.settings.leaseMs,
            }),
          };
      }
      return { version: redacted, lease };
    });
    if (lease) {
      try {
        await this.objects.remove(lease.key);
        await this.cleanups.release(lease.lease);
      } catch (err) {
        this.log.warn(`removing redacted memory object ${lease.key} is left to the sweeper: ${String(err)}`);
      }
    }
    return renderMemoryVersion(version, null);
  }

  private async find(em: EntityManager, storeId: string, versionId: string): Promise<MemoryVersionEntity> {
    if (!isId('memoryVersion', versionId)) throw notFound('memory version', versionId);
    const v = await em.findOne(MemoryVersionEntity, { where: { id: versionId, memoryStoreId: storeId } });
    if (!v) throw notFound('memory version', versionId);
    return v;
  }

  private async content(v: MemoryVersionEntity): Promise<string | null> {
    return v.objectKey ? this.objects.read(v.objectKey) : null;
  }
}
