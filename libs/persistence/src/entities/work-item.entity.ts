import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EnvironmentEntity } from './environment.entity';
import { WorkspaceEntity } from './workspace.entity';

/**
 * One Environment Work item: a Session activation or a healthcheck. The lease facts mirror
 * `WorkLease` of @mango/domain-work-lease; the current claim's token is stored only as a SHA-256
 * digest, rotated on every claim and reclaim (the previous token dies with it).
 */
@Entity({ name: 'work_items' })
@Check('work_items_state_check', "state IN ('queued', 'starting', 'active', 'stopping', 'stopped')")
@Check(
  'work_items_kind_check',
  "(kind = 'session' AND session_id IS NOT NULL AND expires_at IS NULL) OR (kind = 'healthcheck' AND session_id IS NULL AND expires_at IS NOT NULL)",
)
@Check('work_items_result_check', "kind = 'healthcheck' OR result IS NULL")
@Index('work_items_environment_idx', ['environmentId', 'id'])
// Claims: the queued line in creation order, and lost leases by expiry (each a small partial index).
// The queued index holds the whole claim order (created_at, id): Poll's LIMIT 1 reads it from the front
// whatever the planner estimates, instead of sorting every queued row of the Environment per claim.
@Index('work_items_queued_idx', ['environmentId', 'createdAt', 'id'], { where: "state = 'queued'" })
@Index('work_items_lease_idx', ['environmentId', 'leaseExpiresAt'], {
  where: "state IN ('starting', 'active', 'stopping')",
})
// Poll's overdue check (every claim): stops past their lease. Its own partial index, because on the
// lease index above a prepared (generic) plan cannot bound `lease_expires_at <= now` and turned into a
// sequential scan of the whole table once it held a few thousand rows.
@Index('work_items_stopping_idx', ['environmentId', 'leaseExpiresAt'], { where: "state = 'stopping'" })
// Lazy reconciliation of healthcheck deadlines.
@Index('work_items_deadline_idx', ['environmentId', 'expiresAt'], {
  where: "kind = 'healthcheck' AND state <> 'stopped'",
})
@Index('work_items_live_session_key', ['sessionId'], {
  unique: true,
  where: "session_id IS NOT NULL AND state <> 'stopped'",
})
export class WorkItemEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'environment_id', type: 'text' })
  environmentId!: string;

  @Column({ type: 'text' })
  kind!: 'session' | 'healthcheck';

  @Column({ name: 'session_id', type: 'text', nullable: true })
  sessionId!: string | null;

  @Column({ type: 'text' })
  state!: 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Index('work_items_token_digest_key', { unique: true })
  @Column({ name: 'token_digest', type: 'bytea', nullable: true })
  tokenDigest!: Buffer | null;

  @Column({ name: 'worker_id', type: 'text', nullable: true })
  workerId!: string | null;

  @Column({ name: 'claim_count', type: 'integer', default: 0 })
  claimCount!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'claimed_at', type: 'timestamptz', precision: 3, nullable: true })
  claimedAt!: Date | null;

  @Column({ name: 'acknowledged_at', type: 'timestamptz', precision: 3, nullable: true })
  acknowledgedAt!: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', precision: 3, nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'latest_heartbeat_at', type: 'timestamptz', precision: 3, nullable: true })
  latestHeartbeatAt!: Date | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', precision: 3, nullable: true })
  leaseExpiresAt!: Date | null;

  @Column({ name: 'ttl_seconds', type: 'integer', nullable: true })
  ttlSeconds!: number | null;

  @Column({ name: 'stop_requested_at', type: 'timestamptz', precision: 3, nullable: true })
  stopRequestedAt!: Date | null;

  @Column({ name: 'stopped_at', type: 'timestamptz', precision: 3, nullable: true })
  stoppedAt!: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt!: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  result!: { status: 'succeeded' | 'failed' | 'timed_out' | 'cancelled'; message: string } | null;

  @Column({ name: 'result_recorded_at', type: 'timestamptz', precision: 3, nullable: true })
  resultRecordedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;

  @ManyToOne(() => EnvironmentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id' })
  environment?: EnvironmentEntity;
}
