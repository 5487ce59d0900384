import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/** Append-only Session events; `(session_id, seq)` is the gapless per-Session stream order. */
@Entity({ name: 'session_events' })
@Index('session_events_seq_key', ['sessionId', 'seq'], { unique: true })
// Each tool call is answered once: one user.tool_result per (session, tool_use_id).
@Index('session_events_tool_result_key', ['sessionId', 'toolUseId'], {
  unique: true,
  where: 'tool_use_id IS NOT NULL',
})
// Orchestration appends carry a deterministic key (e.g. `turn:3:message`): a retried activity appends nothing twice.
@Index('session_events_idempotency_key', ['sessionId', 'idempotencyKey'], {
  unique: true,
  where: 'idempotency_key IS NOT NULL',
})
// A Thread's history is a filtered read of the one log (ADR 0017).
@Index('session_events_thread_seq_idx', ['sessionId', 'sessionThreadId', 'seq'])
export class SessionEventEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @Column({ type: 'bigint' })
  seq!: string;

  @Column({ type: 'text' })
  type!: string;

  /** The event's own fields (everything but id, type and processed_at). */
  @Column({ type: 'jsonb' })
  body!: Record<string, unknown>;

  /** Set on user.tool_result events: the agent.tool_use event they answer. */
  @Column({ name: 'tool_use_id', type: 'text', nullable: true })
  toolUseId!: string | null;

  /** The Thread the event belongs to; null for the primary Thread (ADR 0017). */
  @Column({ name: 'session_thread_id', type: 'text', nullable: true })
  sessionThreadId!: string | null;

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey!: string | null;

  @Column({ name: 'processed_at', type: 'timestamptz', precision: 3, nullable: true })
  processedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: SessionEntity;
}
