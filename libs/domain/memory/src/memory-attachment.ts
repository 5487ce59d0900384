import { idPattern, invalidRequest, readArray, readObject, readString } from '@mango/domain-kernel';

export type MemoryAccess = 'read_write' | 'read_only';

/** A create-time `{type:"memory_store", memory_store_id, access?, instructions?}` resource. */
export interface MemoryAttachmentInput {
  memoryStoreId: string;
  access: MemoryAccess;
  instructions: string | null;
}

export const MEMORY_ATTACHMENTS_MAX = 8;
export const MEMORY_INSTRUCTIONS_MAX = 4096;
const STORE_ID = idPattern('memoryStore');

/**
 * Parses Session create `resources`: only `memory_store` entries (self-hosted Environments accept no
 * other resource), at most 8, each Store once; `access` defaults to `read_write`.
 */
export function parseMemoryAttachments(raw: unknown): MemoryAttachmentInput[] {
  if (raw === undefined || raw === null) return [];
  const list = readArray(raw, 'resources', { max: MEMORY_ATTACHMENTS_MAX });
  const seen = new Set<string>();
  return list.map((item, i) => {
    const path = `resources[${i}]`;
    const o = readObject(item, path);
    if (o.type !== 'memory_store')
      throw invalidRequest(
        `${path}.type: only memory_store resources are supported with self-hosted environments`,
      );
    readObject(item, path, ['type', 'memory_store_id', 'access', 'instructions']);
    const memoryStoreId = readString(o.memory_store_id, `${path}.memory_store_id`);
    if (!STORE_ID.test(memoryStoreId)) throw invalidRequest(`${path}.memory_store_id must be a memstore_ id`);
    if (seen.has(memoryStoreId))
      throw invalidRequest(`${path}: memory store ${memoryStoreId} is attached twice`);
    seen.add(memoryStoreId);
    let access: MemoryAccess = 'read_write';
    if (o.access !== undefined && o.access !== null) {
      if (o.access !== 'read_write' && o.access !== 'read_only')
        throw invalidRequest(`${path}.access must be read_write or read_only`);
      access = o.access;
    }
    let instructions: string | null = null;
    if (o.instructions !== undefined && o.instructions !== null)
      instructions = readString(o.instructions, `${path}.instructions`, { max: MEMORY_INSTRUCTIONS_MAX });
    return { memoryStoreId, access, instructions };
  });
}
