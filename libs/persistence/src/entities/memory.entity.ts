import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemoryStoreEntity } from './memory-store.entity';

/**
 * The current state of one Memory: its path (unique per Store; ancestors and descendants of a path are
 * refused by the service under the Store row lock), its content's digest and size, and the object
 * holding the content (`object_key`, shared with the head version `memory_version_id`). A deleted Memory
 * has no row; its history stays in `memory_versions`.
 */
@Entity({ name: 'memories' })
@Index('memories_store_path_key', ['memoryStoreId', 'path'], { unique: true })
export class MemoryEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'memory_store_id', type: 'text' })
  memoryStoreId!: string;

  @Column({ type: 'text', collation: 'C' })
  path!: string;

  @Column({ name: 'content_sha256', type: 'text' })
  contentSha256!: string;

  @Column({ name: 'content_size_bytes', type: 'integer' })
  contentSizeBytes!: number;

  @Column({ name: 'object_key', type: 'text' })
  objectKey!: string;

  @Column({ name: 'memory_version_id', type: 'text' })
  memoryVersionId!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @ManyToOne(() => MemoryStoreEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'memory_store_id' })
  store?: MemoryStoreEntity;
}
