import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A leased intent to remove one object from the object store. It is written before an upload writes
 * its object (and deleted in the same transaction that commits the File row), and in the same
 * transaction that deletes a File row. Whoever holds the lease (`lease_owner`, a fresh token per
 * holder) may finish it; an upload renews its lease while it streams. The sweeper claims rows whose
 * lease ran out (`FOR UPDATE SKIP LOCKED`), removes the object and deletes the row. So a crash at any
 * step leaves either a usable File or one of these rows.
 */
@Entity({ name: 'object_cleanups' })
@Index('object_cleanups_lease_idx', ['leaseExpiresAt'])
@Check('object_cleanups_reason_check', "reason IN ('upload', 'delete')")
export class ObjectCleanupEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'object_key', type: 'text' })
  objectKey!: string;

  /** Why the object may have to go: an upload that has not committed yet, or a deleted File. */
  @Column({ type: 'text' })
  reason!: 'upload' | 'delete';

  @Column({ name: 'lease_owner', type: 'text' })
  leaseOwner!: string;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', precision: 3 })
  leaseExpiresAt!: Date;

  /** How many times a sweeper claimed it (a row that keeps coming back points at a broken store). */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}
