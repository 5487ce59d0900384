import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { PromptInputs } from '@mango/domain-sessions';
import { EnvironmentEntity } from './environment.entity';
import { WorkspaceEntity } from './workspace.entity';

/**
 * A Session and its projection (status, usage). `last_seq` is the per-Session event sequence: an append
 * takes `last_seq + 1` on the locked row, so sequences are gapless and ordered without a global lock.
 */
@Entity({ name: 'sessions' })
@Index('sessions_workspace_idx', ['workspaceId', 'id'])
@Index('sessions_deployment_idx', ['deploymentId', 'id'], { where: 'deployment_id IS NOT NULL' })
// The running-Sessions limit counts a Workspace's turns under way at each turn start (fair use,
// SessionRepository.lockAndCountTurns): this index holds only those rows, however many Sessions it has.
@Index('sessions_workspace_turns_idx', ['workspaceId'], {
  where: "status IN ('running', 'rescheduling') AND deleted_at IS NULL",
})
@Check('sessions_status_check', "status IN ('idle', 'running', 'rescheduling', 'terminated')")
export class SessionEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ name: 'environment_id', type: 'text' })
  environmentId!: string;

  @Column({ name: 'agent_id', type: 'text' })
  agentId!: string;

  @Column({ name: 'agent_version', type: 'integer' })
  agentVersion!: number;

  /** The Deployment whose run created this Session, if any. */
  @Column({ name: 'deployment_id', type: 'text', nullable: true })
  deploymentId!: string | null;

  /** The frozen Agent snapshot (version + overrides) this Session runs. */
  @Column({ type: 'jsonb' })
  agent!: Record<string, unknown>;

  @Column({ type: 'text', nullable: true })
  title!: string | null;

  @Column({ type: 'text' })
  status!: 'idle' | 'running' | 'rescheduling' | 'terminated';

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  @Column({ type: 'jsonb', nullable: true })
  budget!: { type: 'limit'; max_list_cost: { amount: string; currency: 'USD' } } | null;

  /** Vaults attached at creation (`vault_ids`, in request order); their credentials authenticate MCP calls. */
  @Column({ name: 'vault_ids', type: 'jsonb', default: () => "'[]'" })
  vaultIds!: string[];

  /**
   * What the model requests show of the frozen Skills and the attached Memory Stores, frozen at create
   * (libs/persistence/src/prompt-inputs.ts). Null on Sessions created before the column existed.
   */
  @Column({ name: 'prompt_inputs', type: 'jsonb', nullable: true })
  promptInputs!: PromptInputs | null;

  @Column({ type: 'jsonb' })
  usage!: Record<string, unknown>;

  @Column({ name: 'last_seq', type: 'bigint' })
  lastSeq!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt!: Date | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true })
  deletedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;

  @ManyToOne(() => EnvironmentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id' })
  environment?: EnvironmentEntity;
}
