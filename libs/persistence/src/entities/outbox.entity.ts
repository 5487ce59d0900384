import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The Temporal outbox: written in the same transaction as the event it announces; the orchestrator's
 * relay claims undispatched rows (SKIP LOCKED), signal-with-starts the Session workflow and marks them.
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_idx', ['id'], { where: 'dispatched_at IS NULL' })
export class OutboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @Column({ name: 'event_seq', type: 'bigint' })
  eventSeq!: string;

  @Column({ type: 'text' })
  kind!: string;

  /** The Thread the row is for (a child Thread's archive or input, ADR 0017); null for the Session's. */
  @Column({ name: 'session_thread_id', type: 'text', nullable: true })
  sessionThreadId!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'dispatched_at', type: 'timestamptz', precision: 3, nullable: true })
  dispatchedAt!: Date | null;
}
