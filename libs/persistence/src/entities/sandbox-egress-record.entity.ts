import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/**
 * One connection a Session's sandbox made through the supervisor's egress proxy (ADR 0021): what it asked
 * for, whether the proxy allowed it or the rule that refused it, and the bytes each way. Written by the
 * supervisor with its Environment key, read with `GET /v1/sessions/{id}/egress_records`; gone with the
 * Session row.
 */
@Entity({ name: 'sandbox_egress_records' })
@Index('sandbox_egress_records_session_idx', ['sessionId', 'id'])
export class SandboxEgressRecordEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @Column({ name: 'work_id', type: 'text' })
  workId!: string;

  @Column({ type: 'text' })
  kind!: 'connect' | 'http';

  @Column({ type: 'text' })
  host!: string;

  @Column({ type: 'integer' })
  port!: number;

  @Column({ type: 'boolean' })
  allowed!: boolean;

  @Column({ type: 'text', nullable: true })
  rule!: string | null;

  @Column({ type: 'text', nullable: true })
  failure!: string | null;

  @Column({ name: 'bytes_out', type: 'bigint' })
  bytesOut!: string;

  @Column({ name: 'bytes_in', type: 'bigint' })
  bytesIn!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: SessionEntity;
}
