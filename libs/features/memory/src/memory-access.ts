import { Injectable } from '@nestjs/common';
import { conflict, notFound, permissionDenied } from '@mango/domain-kernel';
import { requireLiveToken, type Principal } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';
import { MemoryStoreEntity, requireLiveLease, SessionMemoryStoreEntity } from '@mango/persistence';
import type { EntityManager } from 'typeorm';

export type WorkPrincipal = Extract<Principal, { kind: 'work' }>;

/** Who a version records as its author. */
export interface MemoryActor {
  type: 'api_actor' | 'session_actor';
  id: string;
}

export function actorFor(p: Principal): MemoryActor {
  if (p.kind === 'workspace') return { type: 'api_actor', id: p.keyId };
  if (p.kind === 'work' && p.sessionId) return { type: 'session_actor', id: p.sessionId };
  throw permissionDenied();
}

/**
 * Who may reach a Memory Store, decided per request:
 * - a Workspace key: every Store of its Workspace (another Workspace's Store is 404);
 * - a Work token: only the Stores attached to its Session (anything else 404), writes only through
 *   `read_write` attachments (403), and every write re-checks, in the writing transaction, that the token
 *   is still the Work item's current one and its lease is live (401 otherwise). A reclaimed or stopped
 *   token therefore never writes, whatever it read before.
 */
@Injectable()
export class MemoryAccess {
  /**
   * The Store, for reading or (with `write`) for changing its Memories. `lock` takes the Store row
   * `FOR UPDATE` (writes serialize per Store: path conflicts and the Memory count are then exact).
   */
  async store(
    em: EntityManager,
    p: Principal,
    memoryStoreId: string,
    opts: { write?: boolean; lock?: boolean } = {},
  ): Promise<MemoryStoreEntity> {
    if (!isId('memoryStore', memoryStoreId)) throw notFound('memory store', memoryStoreId);
    if (p.kind === 'work') {
      requireLiveToken(p);
      const attachment = p.sessionId
        ? await em.findOne(SessionMemoryStoreEntity, { where: { sessionId: p.sessionId, memoryStoreId } })
        : null;
      if (!attachment) throw notFound('memory store', memoryStoreId);
      if (opts.write && attachment.access !== 'read_write')
        throw permissionDenied(`memory store ${memoryStoreId} is attached read_only to this session`);
      if (opts.write) await requireLiveLease(em, p, p.sessionId);
    } else if (p.kind !== 'workspace') throw permissionDenied();
    const store = await em.findOne(MemoryStoreEntity, {
      where: { id: memoryStoreId, workspaceId: p.workspaceId },
      ...(opts.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!store) throw notFound('memory store', memoryStoreId);
    if (opts.write && store.archivedAt)
      throw conflict(`memory store ${store.id} is archived; its memories are read-only`);
    return store;
  }
}
