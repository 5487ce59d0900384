import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AgentEntity } from './agent.entity';
import type { AgentDefinition } from '@mango/domain-agents';

/** One immutable version of an Agent's definition. Sessions freeze a copy of one of these. */
@Entity({ name: 'agent_versions' })
export class AgentVersionEntity {
  @PrimaryColumn({ name: 'agent_id', type: 'text' })
  agentId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ type: 'jsonb' })
  definition!: AgentDefinition;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => AgentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'agent_id' })
  agent?: AgentEntity;
}
