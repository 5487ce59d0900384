import type { CreatedAtFilter, Metadata, MetadataPatch, PageParams, Timestamp } from './types';

// ---------------------------------------------------------------------------------------------------
// Memory Stores (served by apps/files; openapi.yaml, Memory Stores; openapi.yaml `MemoryStore` shapes)
// ---------------------------------------------------------------------------------------------------

export interface MemoryStore {
  id: string;
  type: 'memory_store';
  name: string;
  /** `""` when unset. */
  description: string;
  metadata: Metadata;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

export interface MemoryStoreCreateParams {
  name: string;
  description?: string;
  metadata?: Metadata;
}

export interface MemoryStoreUpdateParams {
  name?: string | null;
  /** `""` or `null` clears it. */
  description?: string | null;
  metadata?: MetadataPatch | null;
}

export interface MemoryStoreListParams extends PageParams {
  /** Include archived Stores (default false). */
  include_archived?: boolean;
  created_at?: CreatedAtFilter;
}

export interface MemoryStoreDeleted {
  id: string;
  type: 'memory_store_deleted';
}

export type MemoryView = 'basic' | 'full';

export interface Memory {
  id: string;
  type: 'memory';
  memory_store_id: string;
  path: string;
  /** `null` in the basic view. */
  content: string | null;
  content_sha256: string;
  content_size_bytes: number;
  memory_version_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MemoryPrefix {
  type: 'memory_prefix';
  path: string;
}

export interface MemoryCreateParams {
  path: string;
  content: string;
}

export interface ContentSha256Precondition {
  type: 'content_sha256';
  content_sha256: string;
}

export interface MemoryUpdateParams {
  content?: string | null;
  /** A new path (rename; the id is kept). */
  path?: string | null;
  precondition?: ContentSha256Precondition | null;
}

export interface MemoryListParams extends PageParams {
  /** Must end with `/`; default `/`. */
  path_prefix?: string;
  /** 0 (default) = all below the prefix; N ≥ 1 = N levels plus `memory_prefix` rollups. */
  depth?: number;
  view?: MemoryView;
}

export interface MemoryDeleted {
  id: string;
  type: 'memory_deleted';
}

export type MemoryActor =
  { type: 'api_actor'; api_key_id: string } | { type: 'session_actor'; session_id: string };

export interface MemoryVersion {
  id: string;
  type: 'memory_version';
  memory_id: string;
  memory_store_id: string;
  operation: 'created' | 'modified' | 'deleted';
  /** `null` once redacted. */
  path: string | null;
  content: string | null;
  content_sha256: string | null;
  content_size_bytes: number | null;
  created_at: Timestamp;
  created_by: MemoryActor;
  redacted_at: Timestamp | null;
  redacted_by: MemoryActor | null;
}

export interface MemoryVersionListParams extends PageParams {
  memory_id?: string;
  operation?: 'created' | 'modified' | 'deleted';
  session_id?: string;
  api_key_id?: string;
  created_at?: CreatedAtFilter;
  view?: MemoryView;
}
