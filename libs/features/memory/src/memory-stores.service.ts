import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  applyMetadataPatch,
  conflict,
  invalidRequest,
  parseMetadata,
  readObject,
  readString,
} from '@mango/domain-kernel';
import type { Principal } from '@mango/feature-auth';
import { ObjectCleanupRepository } from '@mango/feature-files';
import { newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  parseTimeRange,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import { insertRow, MemoryStoreEntity, recordWebhookEvents } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { MemoryAccess } from './memory-access';
import { MemoryObjects } from './memory-objects';
import { MEMORY_SETTINGS, MemorySettings } from './memory.settings';
import { MemoryStoreView, renderMemoryStore } from './memory.views';

const CURSOR = { scope: 'memory_stores', order: 'desc' as const };
const CONTROL = /[\p{Cc}]/u;

function readName(v: unknown): string {
  const name = readString(v, 'name', { min: 1, max: 255 });
  if (CONTROL.test(name)) throw invalidRequest('name must not contain control characters');
  return name;
}

const readDescription = (v: unknown): string =>
  v === null ? '' : readString(v, 'description', { max: 1024 });

/** Memory Stores (openapi.yaml, Memory Stores): create, get, update, list, archive, delete. */
@Injectable()
export class MemoryStoresService {
  private readonly log = new Logger('memory');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MemoryAccess) private readonly access: MemoryAccess,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(MemoryObjects) private readonly objects: MemoryObjects,
    @Inject(MEMORY_SETTINGS) private readonly settings: MemorySettings,
  ) {}

  async create(workspaceId: string, body: unknown): Promise<MemoryStoreView> {
    const o = readObject(body, 'body', ['name', 'description', 'metadata']);
    if (o.name === undefined) throw invalidRequest('name is required');
    const now = new Date();
    const store = this.dataSource.manager.create(MemoryStoreEntity, {
      id: newId('memoryStore', now.getTime()),
      workspaceId,
      name: readName(o.name),
      description: o.description === undefined ? '' : readDescription(o.description),
      metadata: parseMetadata(o.metadata),
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    });
    await this.dataSource.transaction(async (tx) => {
      await insertRow(tx, MemoryStoreEntity, store);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'memory_store.created', id: store.id }], now);
    });
    return renderMemoryStore(store);
  }

  async get(p: Principal, id: string): Promise<MemoryStoreView> {
    return renderMemoryStore(await this.access.store(this.dataSource.manager, p, id));
  }

  async update(p: Principal, id: string, body: unknown): Promise<MemoryStoreView> {
    const o = readObject(body, 'body', ['name', 'description', 'metadata']);
    return this.dataSource.transaction(async (tx) => {
      const store = await this.access.store(tx, p, id, { lock: true });
      if (store.archivedAt) throw conflict(`memory store ${store.id} is archived and cannot be updated`);
      const next = {
        name: o.name === undefined || o.name === null ? store.name : readName(o.name),
        description: o.description === undefined ? store.description : readDescription(o.description),
        metadata: applyMetadataPatch(store.metadata, o.metadata),
      };
      const changed =
        next.name !== store.name ||
        next.description !== store.description ||
        JSON.stringify(next.metadata) !== JSON.stringify(store.metadata);
      if (!changed) return renderMemoryStore(store);
      const updated = { ...store, ...next, updatedAt: new Date() };
      await tx.update(MemoryStoreEntity, { id: store.id }, { ...next, updatedAt: updated.updatedAt });
      return renderMemoryStore(updated);
    });
  }

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<MemoryStoreView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'include_archived', 'created_at']);
    const limit = parseLimit(query.limit);
    const qb = this.dataSource.manager
      .createQueryBuilder(MemoryStoreEntity, 's')
      .where('s.workspace_id = :workspaceId', { workspaceId })
      .orderBy('s.id', 'DESC')
      .limit(limit + 1);
    if (!parseBooleanQuery(query.include_archived, 'include_archived')) qb.andWhere('s.archived_at IS NULL');
    const range = parseTimeRange(query.created_at, 'created_at', ['gte', 'lte']);
    if (range.gte) qb.andWhere('s.created_at >= :gte', { gte: range.gte });
    if (range.lte) qb.andWhere('s.created_at <= :lte', { lte: range.lte });
    if (typeof query.page === 'string')
      qb.andWhere('s.id < :after', { after: decodeCursor(query.page, CURSOR).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (s) => s.id, renderMemoryStore, CURSOR);
  }

  /** Archiving makes the Store read-only (idempotent). */
  async archive(p: Principal, id: string): Promise<MemoryStoreView> {
    return this.dataSource.transaction(async (tx) => {
      const store = await this.access.store(tx, p, id, { lock: true });
      if (store.archivedAt) return renderMemoryStore(store);
      const now = new Date();
      await tx.update(MemoryStoreEntity, { id: store.id }, { archivedAt: now, updatedAt: now });
      await recordWebhookEvents(
        tx,
        store.workspaceId,
        [{ type: 'memory_store.archived', id: store.id }],
        now,
      );
      return renderMemoryStore({ ...store, archivedAt: now, updatedAt: now });
    });
  }

  /**
   * Deletes the Store with its Memories and versions. The same transaction records a cleanup intent for
   * every content object; the objects and intents go afterwards (or, if the store is down, the sweeper
   * finishes them).
   */
  async delete(p: Principal, id: string): Promise<{ id: string; type: 'memory_store_deleted' }> {
    const leases = await this.dataSource.transaction(async (tx) => {
      const store = await this.access.store(tx, p, id, { lock: true });
      const keys: Array<{ object_key: string }> = await tx.query(
        `SELECT object_key FROM memory_versions WHERE memory_store_id = $1 AND object_key IS NOT NULL
         UNION SELECT object_key FROM memories WHERE memory_store_id = $1`,
        [store.id],
      );
      await tx.delete(MemoryStoreEntity, { id: store.id });
      await recordWebhookEvents(
        tx,
        store.workspaceId,
        [{ type: 'memory_store.deleted', id: store.id }],
        new Date(),
      );
      const out = [];
      for (const { object_key } of keys) {
        const lease = await this.cleanups.register(tx, {
          objectKey: object_key,
          reason: 'delete',
          leaseMs: this.settings.leaseMs,
        });
        out.push({ key: object_key, lease });
      }
      return out;
    });
    for (const { key, lease } of leases) {
      try {
        await this.objects.remove(key);
        await this.cleanups.release(lease);
      } catch (err) {
        this.log.warn(`removing memory object ${key} is left to the sweeper: ${String(err)}`);
      }
    }
    return { id, type: 'memory_store_deleted' };
  }
}
