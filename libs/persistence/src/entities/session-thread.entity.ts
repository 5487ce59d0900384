import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/**
 * A Thread of a Session (ADR 0017, openapi.yaml `SessionThread`): the primary (no parent, created with
 * its Session, id = the Session's ULID with the `sthr_` prefix) and the delegate and Advisor Threads of
 * a multi-agent roster. Its events stay in the Session's one log (`session_events.session_thread_id`).
 * `status` is written only through the Thread status machine (libs/domain/sessions
 * `session-thread.state.ts`); `archive_requested_at` is the durable archive intent the orchestration
 * finishes by setting `archived_at`.
 */
@Entity({ name: 'session_threads' })
@Index('session_threads_session_idx', ['sessionId', 'id'])
@Index('session_threads_primary_key', ['sessionId'], { unique: true, where: 'parent_thread_id IS NULL' })
@Index('session_threads_archive_pending_idx', ['archiveRequestedAt'], {
  where: 'archive_requested_at IS NOT NULL AND archived_at IS NULL',
})
@Check('session_threads_status_check', "status IN ('idle', 'running', 'rescheduling', 'terminated')")
export class SessionThreadEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId!: string;

  /** Null for the primary Thread. */
  @Column({ name: 'parent_thread_id', type: 'text', nullable: true })
  parentThreadId!: string | null;

  /**
   * Which Agent runs the Thread: null for the primary (the Session's own snapshot), the roster entry's
   * index in the frozen snapshot (`"0"`, `"1"`, …), or `advisor`.
   */
  @Column({ name: 'agent_ref', type: 'text', nullable: true })
  agentRef!: string | null;

  @Column({ type: 'text' })
  status!: 'idle' | 'running' | 'rescheduling' | 'terminated';

  /** The Thread's own model usage (SessionUsage fields); null until it has any. */
  @Column({ type: 'jsonb', nullable: true })
  usage!: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  stats!: Record<string, unknown> | null;

  @Column({ name: 'archive_requested_at', type: 'timestamptz', precision: 3, nullable: true })
  archiveRequestedAt!: Date | null;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: SessionEntity;
}
