import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/**
 * The MCP call journal: one row per `agent.mcp_tool_use` the orchestrator calls. The row (intent) commits
 * before the request leaves; `result_at` is set in the transaction that appends the call's single
 * `agent.mcp_tool_result`. A row without `result_at` after a crash means the outcome is unknown: the call
 * is never sent again (see `mcpCallDecision` in @mango/domain-mcp).
 */
@Entity({ name: 'mcp_calls' })
@Index('mcp_calls_session_idx', ['sessionId'])
export class McpCallEntity {
  @PrimaryColumn({ name: 'mcp_tool_use_id', type: 'text' })
  mcpToolUseId!: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @Column({ name: 'server_name', type: 'text' })
  serverName!: string;

  @Column({ name: 'tool_name', type: 'text' })
  toolName!: string;

  @Column({ name: 'intent_at', type: 'timestamptz', precision: 3 })
  intentAt!: Date;

  @Column({ name: 'result_at', type: 'timestamptz', precision: 3, nullable: true })
  resultAt!: Date | null;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'session_id' })
  session?: SessionEntity;
}
