import { AgentVersionEntity } from './agent-version.entity';
import { AgentEntity } from './agent.entity';
import { ApiKeyEntity } from './api-key.entity';
import { DeploymentEntity, DeploymentRunEntity } from './deployment.entity';
import { EnvironmentEntity } from './environment.entity';
import { FileEntity } from './file.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { McpCallEntity } from './mcp-call.entity';
import { MemoryStoreEntity } from './memory-store.entity';
import { MemoryVersionEntity } from './memory-version.entity';
import { MemoryEntity } from './memory.entity';
import { ObjectCleanupEntity } from './object-cleanup.entity';
import { OutboxEntity } from './outbox.entity';
import { SandboxEgressRecordEntity } from './sandbox-egress-record.entity';
import { SessionEventEntity } from './session-event.entity';
import { SessionMemoryStoreEntity } from './session-memory-store.entity';
import { SessionThreadEntity } from './session-thread.entity';
import { SessionEntity } from './session.entity';
import { SkillVersionFileEntity } from './skill-version-file.entity';
import { SkillVersionEntity } from './skill-version.entity';
import { SkillEntity } from './skill.entity';
import { VaultCredentialEntity } from './vault-credential.entity';
import { VaultEntity } from './vault.entity';
import { WorkItemEntity } from './work-item.entity';
import { WorkPollerEntity } from './work-poller.entity';
import { WorkspaceEntity } from './workspace.entity';
import {
  WebhookDeliveryAttemptEntity,
  WebhookDeliveryEntity,
  WebhookEntity,
  WebhookEventEntity,
} from './webhook.entity';
export type { StoredWebhookSecret } from './webhook.entity';

export {
  AgentEntity,
  AgentVersionEntity,
  ApiKeyEntity,
  DeploymentEntity,
  DeploymentRunEntity,
  EnvironmentEntity,
  FileEntity,
  IdempotencyKeyEntity,
  McpCallEntity,
  MemoryEntity,
  MemoryStoreEntity,
  MemoryVersionEntity,
  ObjectCleanupEntity,
  OutboxEntity,
  SandboxEgressRecordEntity,
  SessionEntity,
  SessionEventEntity,
  SessionMemoryStoreEntity,
  SessionThreadEntity,
  SkillEntity,
  SkillVersionEntity,
  SkillVersionFileEntity,
  WebhookDeliveryAttemptEntity,
  WebhookDeliveryEntity,
  WebhookEntity,
  WebhookEventEntity,
  VaultCredentialEntity,
  VaultEntity,
  WorkItemEntity,
  WorkPollerEntity,
  WorkspaceEntity,
};

/** Every entity, as one imported array (no globs): the DataSource and the drift check use this list. */
export const ENTITIES = [
  WorkspaceEntity,
  ApiKeyEntity,
  AgentEntity,
  AgentVersionEntity,
  EnvironmentEntity,
  WorkItemEntity,
  WorkPollerEntity,
  FileEntity,
  ObjectCleanupEntity,
  SessionEntity,
  SessionEventEntity,
  SessionThreadEntity,
  OutboxEntity,
  SkillEntity,
  SkillVersionEntity,
  SkillVersionFileEntity,
  MemoryStoreEntity,
  MemoryEntity,
  MemoryVersionEntity,
  SessionMemoryStoreEntity,
  WebhookEntity,
  WebhookEventEntity,
  WebhookDeliveryEntity,
  WebhookDeliveryAttemptEntity,
  DeploymentEntity,
  DeploymentRunEntity,
  VaultEntity,
  VaultCredentialEntity,
  McpCallEntity,
  IdempotencyKeyEntity,
  SandboxEgressRecordEntity,
];
