import type { EnvironmentEntity } from '@mango/persistence';

/** The wire form of an Environment (openapi.yaml `Environment`; Mango Environments are all self_hosted). */
export function renderEnvironment(e: EnvironmentEntity) {
  return {
    id: e.id,
    type: 'environment' as const,
    name: e.name,
    description: e.description,
    config: e.config,
    scope: e.scope ?? 'organization',
    metadata: e.metadata,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    archived_at: e.archivedAt ? e.archivedAt.toISOString() : null,
  };
}

export type EnvironmentView = ReturnType<typeof renderEnvironment>;
