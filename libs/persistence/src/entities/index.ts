import { AgentVersionEntity } from './agent-version.entity';
import { AgentEntity } from './agent.entity';
import { ApiKeyEntity } from './api-key.entity';
import { EnvironmentEntity } from './environment.entity';
import { WorkspaceEntity } from './workspace.entity';

export { AgentEntity, AgentVersionEntity, ApiKeyEntity, EnvironmentEntity, WorkspaceEntity };

/** Every entity, as one imported array (no globs): the DataSource and the drift check use this list. */
export const ENTITIES = [WorkspaceEntity, ApiKeyEntity, AgentEntity, AgentVersionEntity, EnvironmentEntity];
