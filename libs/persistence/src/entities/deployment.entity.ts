import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/** A Deployment (openapi.yaml `Deployment`): a pinned Session template, run manually or on a Temporal Schedule. */
@Entity({ name: 'deployments' })
@Check('deployments_status_check', "status IN ('active', 'paused')")
@Index('deployments_workspace_idx', ['workspaceId', 'id'])
@Index('deployments_agent_idx', ['agentId'])
export class DeploymentEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ name: 'agent_id', type: 'text' })
  agentId!: string;

  /** Always pinned: an id without a version is pinned to the Agent's version when written. */
  @Column({ name: 'agent_version', type: 'integer' })
  agentVersion!: number;

  @Column({ name: 'environment_id', type: 'text' })
  environmentId!: string;

  /** Client events (param-shaped, no ids). */
  @Column({ name: 'initial_events', type: 'jsonb' })
  initialEvents!: Array<Record<string, unknown>>;

  /** Memory Store templates: `{type:"memory_store", memory_store_id, access, instructions}`. */
  @Column({ type: 'jsonb' })
  resources!: Array<Record<string, unknown>>;

  /** `{type:"cron", expression, timezone, jitter_ms}` or null (manual only). */
  @Column({ type: 'jsonb', nullable: true })
  schedule!: { type: 'cron'; expression: string; timezone: string; jitter_ms: number } | null;

  /** Vaults each run attaches to its Session (`vault_ids`, in request order). */
  @Column({ name: 'vault_ids', type: 'jsonb', default: () => "'[]'" })
  vaultIds!: string[];

  @Column({ type: 'text' })
  status!: 'active' | 'paused';

  @Column({ name: 'paused_reason', type: 'jsonb', nullable: true })
  pausedReason!: { type: 'manual' } | { type: 'error'; error: { type: string } } | null;

  @Column({ type: 'jsonb', nullable: true })
  budget!: Record<string, unknown> | null;

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}

/** One run of a Deployment: exactly one of `session_id` / `error` (a CHECK keeps it so). */
@Entity({ name: 'deployment_runs' })
@Check('deployment_runs_outcome_check', '(session_id IS NULL) <> (error IS NULL)')
@Index('deployment_runs_deployment_idx', ['deploymentId', 'id'])
@Index('deployment_runs_workspace_idx', ['workspaceId', 'id'])
@Index('deployment_runs_scheduled_key', ['deploymentId', 'scheduledAt'], {
  unique: true,
  where: 'scheduled_at IS NOT NULL',
})
export class DeploymentRunEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'deployment_id', type: 'text' })
  deploymentId!: string;

  @Column({ name: 'agent_id', type: 'text' })
  agentId!: string;

  @Column({ name: 'agent_version', type: 'integer' })
  agentVersion!: number;

  @Column({ name: 'session_id', type: 'text', nullable: true })
  sessionId!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: { type: string; message: string } | null;

  /** `schedule` or `manual`. */
  @Column({ name: 'trigger_type', type: 'text' })
  triggerType!: 'schedule' | 'manual';

  /** The schedule's nominal time (unique per Deployment: a repeated action records one run). */
  @Column({ name: 'scheduled_at', type: 'timestamptz', precision: 3, nullable: true })
  scheduledAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => DeploymentEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'deployment_id' })
  deployment?: DeploymentEntity;
}
