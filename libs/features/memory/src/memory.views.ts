import type { MemoryEntity, MemoryStoreEntity, MemoryVersionEntity } from '@mango/persistence';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function renderMemoryStore(s: MemoryStoreEntity) {
  return {
    id: s.id,
    type: 'memory_store' as const,
    name: s.name,
    description: s.description,
    metadata: s.metadata,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    archived_at: iso(s.archivedAt),
  };
}

/** `content` is null in the basic view. */
export function renderMemory(m: MemoryEntity, content: string | null) {
  return {
    id: m.id,
    type: 'memory' as const,
    memory_store_id: m.memoryStoreId,
    path: m.path,
    content,
    content_sha256: m.contentSha256,
    content_size_bytes: m.contentSizeBytes,
    memory_version_id: m.memoryVersionId,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}

export type Actor = { type: 'api_actor'; api_key_id: string } | { type: 'session_actor'; session_id: string };

export function actorOf(type: 'api_actor' | 'session_actor', id: string): Actor {
  return type === 'api_actor' ? { type, api_key_id: id } : { type, session_id: id };
}

/** Content, path, digest and size are null when redacted (and, but for the path, when deleted). */
export function renderMemoryVersion(v: MemoryVersionEntity, content: string | null) {
  return {
    id: v.id,
    type: 'memory_version' as const,
    memory_id: v.memoryId,
    memory_store_id: v.memoryStoreId,
    operation: v.operation,
    path: v.path,
    content,
    content_sha256: v.contentSha256,
    content_size_bytes: v.contentSizeBytes,
    created_at: v.createdAt.toISOString(),
    created_by: actorOf(v.createdByType, v.createdById),
    redacted_at: iso(v.redactedAt),
    redacted_by: v.redactedByType && v.redactedById ? actorOf(v.redactedByType, v.redactedById) : null,
  };
}

export type MemoryStoreView = ReturnType<typeof renderMemoryStore>;
export type MemoryView = ReturnType<typeof renderMemory>;
export type MemoryPrefixView = { type: 'memory_prefix'; path: string };
export type MemoryVersionView = ReturnType<typeof renderMemoryVersion>;
