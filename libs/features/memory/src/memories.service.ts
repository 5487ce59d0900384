import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ancestorPaths, normalizeMemoryPath, normalizePathPrefix, readSha256 } from '@mango/domain-memory';
import { conflict, invalidRequest, notFound, readObject } from '@mango/domain-kernel';
import type { Principal } from '@mango/feature-auth';
import type { UploadIdempotency } from '@mango/feature-idempotency';
import {
  CleanupLease,
  CleanupLeaseKeeper,
  isMissingObject,
  LeaseLostError,
  ObjectCleanupRepository,
} from '@mango/feature-files';
import { isId, newId } from '@mango/platform-ids';
import { Page, parseLimit, rejectUnknownQuery } from '@mango/platform-pagination';
import { insertRow, MemoryEntity, MemoryStoreEntity, MemoryVersionEntity } from '@mango/persistence';
import { DataSource, EntityManager } from 'typeorm';
import { actorFor, MemoryAccess } from './memory-access';
import { decodeMemoryCursor, encodeMemoryCursor } from './memory-cursor';
import { pathConflict, preconditionFailed, readContent, readView } from './memory-errors';
import { MemoryObjects } from './memory-objects';
import { MEMORY_SETTINGS, MemorySettings } from './memory.settings';
import { MemoryPrefixView, MemoryView, renderMemory } from './memory.views';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** New content on its way into a version: its own object, written before the row commits. */
interface StagedContent {
  versionId: string;
  objectKey: string;
  sha256: string;
  size: number;
}

/** What a write transaction decided: the result, and whether it kept the staged object. */
interface Outcome<T> {
  value: T;
  used: boolean;
}

/**
 * Memories at paths in a Store (openapi.yaml, Memory Stores). Content writes follow the Files recovery pattern:
 * 1. a leased cleanup intent for a fresh object key is committed;
 * 2. the content is written to that key;
 * 3. one transaction re-checks access (and the Work lease), applies the change, records the version
 *    and deletes the intent only if its lease is still ours.
 * Any failure removes the object and the intent; a crash leaves the intent for the sweeper. Requests that
 * are refused before step 1 (bad input, no access, a failed precondition seen in a first read) store
 * nothing at all.
 */
@Injectable()
export class MemoriesService {
  private readonly log = new Logger('memory');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MemoryAccess) private readonly access: MemoryAccess,
    @Inject(ObjectCleanupRepository) private readonly cleanups: ObjectCleanupRepository,
    @Inject(MemoryObjects) private readonly objects: MemoryObjects,
    @Inject(MEMORY_SETTINGS) private readonly settings: MemorySettings,
  ) {}

  // ── Writes ─────────────────────────────────────────────────────────────────────────────────────────

  /**
   * `idempotency`: the request's Idempotency-Key (docs/api-guide.md, "Idempotent requests"): a repeat is
   * answered before any check or write, and the final transaction records the key with the response.
   */
  async create(
    p: Principal,
    storeId: string,
    query: Record<string, unknown>,
    body: unknown,
    idempotency?: UploadIdempotency,
  ) {
    await idempotency?.precheck(body);
    rejectUnknownQuery(query, ['view']);
    const view = readView(query.view, 'basic');
    const o = readObject(body, 'body', ['path', 'content']);
    if (o.path === undefined) throw invalidRequest('path is required');
    if (o.content === undefined) throw invalidRequest('content is required');
    const path = normalizeMemoryPath(o.path);
    const content = readContent(o.content, this.settings.maxContentBytes);
    // A first look, so that a request bound to be refused writes no object at all.
    await this.createChecks(this.dataSource.manager, p, storeId, path, false);
    return this.withContent(p, storeId, content, keyed(idempotency, body), async (tx, staged) => {
      const store = await this.createChecks(tx, p, storeId, path, true);
      const now = new Date();
      const memory = tx.create(MemoryEntity, {
        id: newId('memory', now.getTime()),
        memoryStoreId: store.id,
        path,
        contentSha256: staged.sha256,
        contentSizeBytes: staged.size,
        objectKey: staged.objectKey,
        memoryVersionId: staged.versionId,
        createdAt: now,
        updatedAt: now,
      });
      await insertRow(tx, MemoryEntity, memory);
      await this.recordVersion(tx, p, memory, 'created', now);
      return { value: renderMemory(memory, view === 'full' ? content.toString('utf8') : null), used: true };
    });
  }

  async update(
    p: Principal,
    storeId: string,
    memoryId: string,
    query: Record<string, unknown>,
    body: unknown,
    idempotency?: UploadIdempotency,
  ): Promise<MemoryView> {
    await idempotency?.precheck(body);
    rejectUnknownQuery(query, ['view']);
    const view = readView(query.view, 'basic');
    const o = readObject(body, 'body', ['content', 'path', 'precondition']);
    const content =
      o.content === undefined || o.content === null
        ? null
        : readContent(o.content, this.settings.maxContentBytes);
    const newPath = o.path === undefined || o.path === null ? null : normalizeMemoryPath(o.path);
    const expected = readPrecondition(o.precondition);
    if (content === null && newPath === null) throw invalidRequest('give content and/or path to update');
    const sha = content ? sha256(content) : null;

    type Plan = { memory: MemoryEntity; noop: boolean };
    const plan = async (em: EntityManager, lock: boolean): Promise<Plan> => {
      const store = await this.access.store(em, p, storeId, { write: true, lock });
      const memory = await this.findMemory(em, store.id, memoryId);
      const path = newPath ?? memory.path;
      // Already in the requested state (e.g. a retry whose response was lost): 200, nothing written.
      if ((sha ?? memory.contentSha256) === memory.contentSha256 && path === memory.path)
        return { memory, noop: true };
      if (expected !== undefined && expected !== memory.contentSha256)
        throw preconditionFailed(memory.id, memory.contentSha256);
      if (path !== memory.path) await this.requireFreePath(em, store.id, path, memory.id);
      return { memory, noop: false };
    };
    const render = async (m: MemoryEntity, fresh?: Buffer) =>
      renderMemory(
        m,
        view === 'full' ? (fresh?.toString('utf8') ?? (await this.objects.read(m.objectKey))) : null,
      );

    const commit = keyed(idempotency, body);
    const first = await plan(this.dataSource.manager, false);
    if (first.noop) return commit(() => render(first.memory));

    const apply = async (tx: EntityManager, staged: StagedContent | null): Promise<Outcome<MemoryView>> => {
      const { memory, noop } = await plan(tx, true);
      if (noop) return { value: await render(memory), used: false };
      const now = new Date();
      const next: MemoryEntity = {
        ...memory,
        path: newPath ?? memory.path,
        contentSha256: staged ? staged.sha256 : memory.contentSha256,
        contentSizeBytes: staged ? staged.size : memory.contentSizeBytes,
        objectKey: staged ? staged.objectKey : memory.objectKey,
        memoryVersionId: staged ? staged.versionId : newId('memoryVersion', now.getTime()),
        updatedAt: now,
      };
      await tx.update(
        MemoryEntity,
        { id: memory.id },
        {
          path: next.path,
          contentSha256: next.contentSha256,
          contentSizeBytes: next.contentSizeBytes,
          objectKey: next.objectKey,
          memoryVersionId: next.memoryVersionId,
          updatedAt: now,
        },
      );
      await this.recordVersion(tx, p, next, 'modified', now);
      return { value: await render(next, content ?? undefined), used: staged !== null };
    };
    if (content === null)
      return commit(() => this.dataSource.transaction(async (tx) => (await apply(tx, null)).value));
    return this.withContent(p, storeId, content, commit, apply);
  }

  async delete(p: Principal, storeId: string, memoryId: string, query: Record<string, unknown>) {
    rejectUnknownQuery(query, ['expected_content_sha256']);
    const expected =
      query.expected_content_sha256 === undefined
        ? undefined
        : readSha256(query.expected_content_sha256, 'expected_content_sha256');
    return this.dataSource.transaction(async (tx) => {
      const store = await this.access.store(tx, p, storeId, { write: true, lock: true });
      const memory = await this.findMemory(tx, store.id, memoryId);
      if (expected !== undefined && expected !== memory.contentSha256)
        throw preconditionFailed(memory.id, memory.contentSha256);
      await tx.delete(MemoryEntity, { id: memory.id });
      await this.recordVersion(tx, p, memory, 'deleted', new Date());
      return { id: memory.id, type: 'memory_deleted' as const };
    });
  }

  // ── Reads ──────────────────────────────────────────────────────────────────────────────────────────

  async get(p: Principal, storeId: string, memoryId: string, query: Record<string, unknown>) {
    rejectUnknownQuery(query, ['view']);
    const view = readView(query.view, 'full');
    const store = await this.access.store(this.dataSource.manager, p, storeId);
    const memory = await this.findMemory(this.dataSource.manager, store.id, memoryId);
    if (view === 'basic') return renderMemory(memory, null);
    try {
      return renderMemory(memory, await this.objects.read(memory.objectKey));
    } catch (err) {
      if (!isMissingObject(err)) throw err;
      // Changed, or deleted with its Store, between the row read and the object read: read again once.
      const again = await this.findMemory(this.dataSource.manager, store.id, memoryId);
      if (again.objectKey === memory.objectKey) throw err;
      return renderMemory(again, await this.objects.read(again.objectKey));
    }
  }

  /**
   * Memories under `path_prefix` (default `/`), ordered by path (byte order). `depth` 0 lists every
   * Memory below the prefix; `depth` N ≥ 1 lists Memories at most N segments below it and rolls deeper
   * ones up into one `memory_prefix` per directory N segments down. `view=full` caps `limit` at 20,
   * basic at 100.
   */
  async list(
    p: Principal,
    storeId: string,
    query: Record<string, unknown>,
  ): Promise<Page<MemoryView | MemoryPrefixView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'path_prefix', 'depth', 'view']);
    const view = readView(query.view, 'basic');
    const limit = parseLimit(query.limit, view === 'full' ? 20 : 100);
    const prefix = normalizePathPrefix(query.path_prefix);
    const depth = readDepth(query.depth);
    const store = await this.access.store(this.dataSource.manager, p, storeId);
    const scope = JSON.stringify([store.id, prefix, depth]);
    let after: string | null = null;
    if (typeof query.page === 'string') after = decodeMemoryCursor(query.page, scope);
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows: Array<{ entry: string; memory_id: string | null }> = await this.dataSource.query(
      `WITH e AS (
         SELECT m.id, m.path, string_to_array(substr(m.path, char_length($2::text) + 1), '/') AS segs
           FROM memories m
          WHERE m.memory_store_id = $1 AND starts_with(m.path, $2::text)),
       entries AS (
         SELECT CASE WHEN $3::int > 0 AND array_length(segs, 1) > $3::int
                     THEN $2::text || array_to_string(segs[1:$3::int], '/') || '/'
                     ELSE path END COLLATE "C" AS entry,
                CASE WHEN $3::int > 0 AND array_length(segs, 1) > $3::int THEN NULL ELSE id END AS memory_id
           FROM e)
       SELECT DISTINCT entry, memory_id FROM entries
        WHERE $4::text IS NULL OR entry > $4::text COLLATE "C"
        ORDER BY entry LIMIT $5`,
      [store.id, prefix, depth, after, limit + 1],
    );
    const page = rows.slice(0, limit);
    const ids = page.flatMap((r) => (r.memory_id ? [r.memory_id] : []));
    const memories = ids.length
      ? await this.dataSource.manager
          .createQueryBuilder(MemoryEntity, 'm')
          .where('m.id IN (:...ids)', { ids })
          .getMany()
      : [];
    const byId = new Map(memories.map((m) => [m.id, m]));
    const data: Array<MemoryView | MemoryPrefixView> = [];
    for (const r of page) {
      if (!r.memory_id) {
        data.push({ type: 'memory_prefix', path: r.entry });
        continue;
      }
      const m = byId.get(r.memory_id);
      if (!m) continue; // deleted between the two reads
      data.push(renderMemory(m, view === 'full' ? await this.readOrNull(m) : null));
    }
    const last = page[page.length - 1];
    return {
      data,
      next_page: rows.length > limit && last ? encodeMemoryCursor(scope, last.entry) : null,
    };
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  private async createChecks(
    em: EntityManager,
    p: Principal,
    storeId: string,
    path: string,
    lock: boolean,
  ): Promise<MemoryStoreEntity> {
    const store = await this.access.store(em, p, storeId, { write: true, lock });
    const [{ n }]: Array<{ n: number }> = await em.query(
      'SELECT count(*)::int AS n FROM memories WHERE memory_store_id = $1',
      [store.id],
    );
    if (n >= this.settings.maxMemoriesPerStore)
      throw conflict(`memory store ${store.id} already holds ${this.settings.maxMemoriesPerStore} memories`);
    await this.requireFreePath(em, store.id, path);
    return store;
  }

  /** No other Memory at `path`, below it, or at one of its ancestors. */
  private async requireFreePath(
    em: EntityManager,
    storeId: string,
    path: string,
    exceptId = '',
  ): Promise<void> {
    const [hit]: Array<{ id: string; path: string }> = await em.query(
      `SELECT id, path FROM memories
        WHERE memory_store_id = $1 AND id <> $4
          AND (path = $2 OR starts_with(path, $2 || '/') OR path = ANY($3::text[]))
        ORDER BY path LIMIT 1`,
      [storeId, path, ancestorPaths(path), exceptId],
    );
    if (hit) throw pathConflict(path, hit);
  }

  private async findMemory(em: EntityManager, storeId: string, memoryId: string): Promise<MemoryEntity> {
    if (!isId('memory', memoryId)) throw notFound('memory', memoryId);
    const memory = await em.findOne(MemoryEntity, { where: { id: memoryId, memoryStoreId: storeId } });
    if (!memory) throw notFound('memory', memoryId);
    return memory;
  }

  private async readOrNull(m: MemoryEntity): Promise<string | null> {
    return this.objects.read(m.objectKey);
  }

  private async recordVersion(
    tx: EntityManager,
    p: Principal,
    m: MemoryEntity,
    operation: 'created' | 'modified' | 'deleted',
    now: Date,
  ): Promise<void> {
    const actor = actorFor(p);
    const deleted = operation === 'deleted';
    await insertRow(tx, MemoryVersionEntity, {
      id: deleted ? newId('memoryVersion', now.getTime()) : m.memoryVersionId,
      memoryStoreId: m.memoryStoreId,
      memoryId: m.id,
      operation,
      path: m.path,
      contentSha256: deleted ? null : m.contentSha256,
      contentSizeBytes: deleted ? null : m.contentSizeBytes,
      objectKey: deleted ? null : m.objectKey,
      createdByType: actor.type,
      createdById: actor.id,
      createdAt: now,
      redactedAt: null,
      redactedByType: null,
      redactedById: null,
    });
  }

  /** Steps 1–3 of a content write (see the class comment). */
  private async withContent<T>(
    p: Principal,
    storeId: string,
    content: Buffer,
    commit: Committer,
    apply: (tx: EntityManager, staged: StagedContent) => Promise<Outcome<T>>,
  ): Promise<T> {
    const versionId = newId('memoryVersion');
    const staged: StagedContent = {
      versionId,
      objectKey: MemoryObjects.key(p.workspaceId, storeId, versionId),
      sha256: sha256(content),
      size: content.length,
    };
    const lease = await this.cleanups.register(this.dataSource.manager, {
      objectKey: staged.objectKey,
      reason: 'upload',
      leaseMs: this.settings.leaseMs,
    });
    let outcome: Outcome<T>;
    // The lease is renewed from its registration to the commit, like a File upload's: a live write is
    // never swept however long the object put (a loaded S3) or the Store's row lock (concurrent writers
    // in turn) takes. Only a writer whose renewals stop (it died or stalled) loses it: a sweeper takes the
    // object, and the commit below refuses.
    const keeper = new CleanupLeaseKeeper(this.cleanups, lease, this.settings.leaseMs, this.log);
    try {
      await this.objects.put(staged.objectKey, content);
      let out: Outcome<T> | undefined;
      await commit(async () => {
        out = await this.dataSource.transaction(async (tx) => {
          const applied = await apply(tx, staged);
          if (applied.used && !(await this.cleanups.release(lease, tx))) throw new LeaseLostError(lease);
          return applied;
        });
        return out.value;
      });
      outcome = out!;
    } catch (err) {
      await keeper.stop();
      // A failure after the lease was lost (a sweeper took it, and may have removed the object mid-write)
      // is that lost race, retryable, whatever the store or the database said about it.
      const lost =
        !(err instanceof LeaseLostError) &&
        !(await this.cleanups.renew(lease, this.settings.leaseMs).catch(() => true));
      await this.abandon(staged.objectKey, lease);
      throw lost ? new LeaseLostError(lease) : err;
    }
    await keeper.stop();
    if (!outcome.used) await this.abandon(staged.objectKey, lease);
    return outcome.value;
  }

  /** Removes an unused object and its intent; if the intent was taken over, a fresh one covers us first. */
  private async abandon(key: string, lease: CleanupLease): Promise<void> {
    try {
      let held = lease;
      if (!(await this.cleanups.renew(held, this.settings.leaseMs)))
        held = await this.cleanups.register(this.dataSource.manager, {
          objectKey: key,
          reason: 'upload',
          leaseMs: this.settings.leaseMs,
        });
      await this.objects.remove(key);
      await this.cleanups.release(held);
    } catch (err) {
      this.log.warn(`cleanup of unused memory object ${key} is left to the sweeper: ${String(err)}`);
    }
  }
}

/** Runs a write's final statement, with the request's Idempotency-Key when it has one. */
type Committer = <V>(write: () => Promise<V>) => Promise<V>;

function keyed(idempotency: UploadIdempotency | undefined, body: unknown): Committer {
  return (write) => (idempotency ? idempotency.commit(body, write) : write());
}

function readPrecondition(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const o = readObject(raw, 'precondition', ['type', 'content_sha256']);
  if (o.type !== 'content_sha256') throw invalidRequest('precondition.type must be content_sha256');
  return readSha256(o.content_sha256, 'precondition.content_sha256');
}

function readDepth(raw: unknown): number {
  if (raw === undefined || raw === '') return 0;
  if (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw) || Number(raw) > 20)
    throw invalidRequest('depth must be an integer from 0 to 20');
  return Number(raw);
}
