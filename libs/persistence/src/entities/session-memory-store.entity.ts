import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/**
 * A Memory Store attached to a Session at creation (the Session's `memory_store` resources), with the
 * snapshot the Session shows (name, description, mount path) and the access its Work token gets.
 * No foreign key to the Store: a deleted Store leaves the snapshot, and the Work token then gets 404.
 */
@Entity({ name: 'session_memory_stores' })
@Index('session_memory_stores_store_idx', ['memoryStoreId'])
@Check('session_memory_stores_access_check', "access IN ('read_write', 'read_only')")
export class SessionMemoryStoreEntity {
  @PrimaryColumn({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @PrimaryColumn({ name: 'memory_store_id', type: 'text' })
  memoryStoreId!: string;

  /** Order of the resource in the create request. */
  @Column({ type: 'integer' })
  position!: number;

  @Column({ type: 'text' })
  access!: 'read_write' | 'read_only';

  @Column({ type: 'text', nullable: true })
  instructions!: string | null;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  description!: string;

  @Column({ name: 'mount_path', type: 'text' })
  mountPath!: string;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: SessionEntity;
}
