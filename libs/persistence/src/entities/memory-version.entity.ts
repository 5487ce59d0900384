import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemoryStoreEntity } from './memory-store.entity';

/**
 * One immutable step of a Memory's history: created, modified (content and/or path) or deleted, with
 * the acting credential (`api_actor` = a Workspace key id, `session_actor` = the Session whose Work token
 * wrote it). Redaction clears path, digest, size and object (the object is removed when nothing else
 * names it) and records who redacted it; actor and timestamps stay.
 */
@Entity({ name: 'memory_versions' })
@Index('memory_versions_store_idx', ['memoryStoreId', 'id'])
@Index('memory_versions_memory_idx', ['memoryId', 'id'])
@Index('memory_versions_object_idx', ['objectKey'])
@Check('memory_versions_operation_check', "operation IN ('created', 'modified', 'deleted')")
@Check('memory_versions_actor_check', "created_by_type IN ('api_actor', 'session_actor')")
export class MemoryVersionEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'memory_store_id', type: 'text' })
  memoryStoreId!: string;

  /** No foreign key: a deleted Memory keeps its history. */
  @Column({ name: 'memory_id', type: 'text' })
  memoryId!: string;

  @Column({ type: 'text' })
  operation!: 'created' | 'modified' | 'deleted';

  @Column({ type: 'text', nullable: true })
  path!: string | null;

  @Column({ name: 'content_sha256', type: 'text', nullable: true })
  contentSha256!: string | null;

  @Column({ name: 'content_size_bytes', type: 'integer', nullable: true })
  contentSizeBytes!: number | null;

  @Column({ name: 'object_key', type: 'text', nullable: true })
  objectKey!: string | null;

  @Column({ name: 'created_by_type', type: 'text' })
  createdByType!: 'api_actor' | 'session_actor';

  /** The Workspace key id (`key_…`) or the Session id (`sesn_…`). */
  @Column({ name: 'created_by_id', type: 'text' })
  createdById!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'redacted_at', type: 'timestamptz', precision: 3, nullable: true })
  redactedAt!: Date | null;

  @Column({ name: 'redacted_by_type', type: 'text', nullable: true })
  redactedByType!: 'api_actor' | null;

  @Column({ name: 'redacted_by_id', type: 'text', nullable: true })
  redactedById!: string | null;

  @ManyToOne(() => MemoryStoreEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'memory_store_id' })
  store?: MemoryStoreEntity;
}
