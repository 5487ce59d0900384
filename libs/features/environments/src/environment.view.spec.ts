import type { EnvironmentEntity } from '@mango/persistence';
import { renderEnvironment } from './environment.view';

describe('renderEnvironment', () => {
  const base = {
    id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    workspaceId: 'wrkspc_default',
    name: 'pool',
    description: null,
    config: { type: 'self_hosted' as const },
    scope: null,
    metadata: { a: 'b' },
    createdAt: new Date('2026-01-01T00:00:00.123Z'),
    updatedAt: new Date('2026-01-02T00:00:00Z'),
    archivedAt: null,
    deletedAt: null,
  } as EnvironmentEntity;

  it('renders RFC 3339 millisecond timestamps, a default scope, and never the workspace or deletion fields', () => {
    expect(renderEnvironment(base)).toEqual({
      id: base.id,
      type: 'environment',
      name: 'pool',
      description: null,
      config: { type: 'self_hosted' },
      scope: 'organization',
      metadata: { a: 'b' },
      created_at: '2026-01-01T00:00:00.123Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      archived_at: null,
    });
  });
});
