import { invalidRequest } from '@mango/domain-kernel';
import { MEMORY_MOUNT_ROOT, MemoryAttachmentInput, memoryStoreSlug } from '@mango/domain-memory';
import { EntityManager, In } from 'typeorm';
import { MemoryStoreEntity } from './entities/memory-store.entity';
import { SessionMemoryStoreEntity } from './entities/session-memory-store.entity';
import { insertRow } from './insert-row';

/** A Session's `memory_store` resource as the Session shows it (openapi.yaml `SessionResource` SessionResource). */
export interface SessionMemoryResource {
  type: 'memory_store';
  memory_store_id: string;
  access: 'read_write' | 'read_only';
  instructions: string | null;
  name: string;
  description: string;
  mount_path: string;
}

export function renderSessionMemoryResource(row: SessionMemoryStoreEntity): SessionMemoryResource {
  return {
    type: 'memory_store',
    memory_store_id: row.memoryStoreId,
    access: row.access,
    instructions: row.instructions,
    name: row.name,
    description: row.description,
    mount_path: row.mountPath,
  };
}

/**
 * Attaches the Memory Stores of a Session create request's `resources` (parsed with
 * `parseMemoryAttachments`: only `memory_store` entries, ≤ 8, each once, `access` default `read_write`).
 * Call inside the creating transaction, after the Session row is inserted. An unknown Store (or another Workspace's) or an archived one is
 * 400, like every other invalid reference in a Session create. Each Store is mounted at
 * `/mnt/memory/<slug of its name>`, with `-2`, `-3`… when two attached Stores share a slug. Returns the
 * resources to show on the Session.
 */
export async function attachSessionMemoryStores(
  tx: EntityManager,
  workspaceId: string,
  sessionId: string,
  inputs: MemoryAttachmentInput[],
): Promise<SessionMemoryResource[]> {
  return insertSessionMemoryStores(tx, await planSessionMemoryStores(tx, workspaceId, sessionId, inputs));
}

/**
 * The checks and mounts of {@link attachSessionMemoryStores} without the writes: the attachment rows
 * (Stores locked FOR SHARE), for a create that needs the resources before the Session row is inserted.
 */
export async function planSessionMemoryStores(
  tx: EntityManager,
  workspaceId: string,
  sessionId: string,
  inputs: MemoryAttachmentInput[],
): Promise<SessionMemoryStoreEntity[]> {
  if (inputs.length === 0) return [];
  const stores = await tx.find(MemoryStoreEntity, {
    where: { id: In(inputs.map((i) => i.memoryStoreId)), workspaceId },
    lock: { mode: 'pessimistic_read' },
  });
  const byId = new Map(stores.map((s) => [s.id, s]));
  const used = new Set<string>();
  const rows = inputs.map((input, position) => {
    const store = byId.get(input.memoryStoreId);
    if (!store) throw invalidRequest(`memory store ${input.memoryStoreId} not found`);
    if (store.archivedAt) throw invalidRequest(`memory store ${store.id} is archived`);
    const slug = memoryStoreSlug(store.name, store.id);
    let mount = `${MEMORY_MOUNT_ROOT}/${slug}`;
    for (let n = 2; used.has(mount); n++) mount = `${MEMORY_MOUNT_ROOT}/${slug}-${n}`;
    used.add(mount);
    return tx.create(SessionMemoryStoreEntity, {
      sessionId,
      memoryStoreId: store.id,
      position,
      access: input.access,
      instructions: input.instructions,
      name: store.name,
      description: store.description,
      mountPath: mount,
    });
  });
  return rows;
}

/** Inserts planned attachment rows (after their Session's row) and answers the resources they show. */
export async function insertSessionMemoryStores(
  tx: EntityManager,
  rows: SessionMemoryStoreEntity[],
): Promise<SessionMemoryResource[]> {
  for (const row of rows) await insertRow(tx, SessionMemoryStoreEntity, row);
  return rows.map(renderSessionMemoryResource);
}

/** The `memory_store` resources of Sessions, in request order, for rendering them. */
export async function sessionMemoryResources(
  em: EntityManager,
  sessionIds: string[],
): Promise<Map<string, SessionMemoryResource[]>> {
  const out = new Map<string, SessionMemoryResource[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return out;
  const rows = await em.find(SessionMemoryStoreEntity, {
    where: { sessionId: In(sessionIds) },
    order: { sessionId: 'ASC', position: 'ASC' },
  });
  for (const r of rows) out.get(r.sessionId)?.push(renderSessionMemoryResource(r));
  return out;
}
