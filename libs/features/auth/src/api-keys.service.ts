import { invalidRequest, notFound } from '@mango/domain-kernel';
import { isId, newId } from '@mango/platform-ids';
import { ApiKeyEntity, EnvironmentEntity, WorkspaceEntity } from '@mango/persistence';
import { DataSource, IsNull } from 'typeorm';
import { credentialHint, digestCredential, generateCredential } from './credential';

export interface ApiKeyView {
  id: string;
  workspace_id: string;
  environment_id: string | null;
  label: string;
  key_hint: string;
  created_at: string;
  revoked_at: string | null;
}

export interface CreatedApiKey extends ApiKeyView {
  /** The key itself: shown once, never stored. */
  api_key: string;
}

const view = (k: ApiKeyEntity): ApiKeyView => ({
  id: k.id,
  workspace_id: k.workspaceId,
  environment_id: k.environmentId,
  label: k.label,
  key_hint: k.keyHint,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
});

/** Issue, list and revoke Workspace and Environment keys (the operator CLI and tests use this). */
export class ApiKeysService {
  constructor(private readonly dataSource: DataSource) {}

  async create(input: {
    workspaceId: string;
    environmentId?: string;
    label: string;
  }): Promise<CreatedApiKey> {
    const label = input.label.trim();
    if (label.length < 1 || label.length > 256) throw invalidRequest('label must be 1–256 characters');
    return this.dataSource.transaction(async (tx) => {
      const workspace = await tx.findOne(WorkspaceEntity, { where: { id: input.workspaceId } });
      if (!workspace) throw notFound('workspace', input.workspaceId);
      if (input.environmentId !== undefined) {
        const env = isId('environment', input.environmentId)
          ? await tx.findOne(EnvironmentEntity, {
              where: { id: input.environmentId, workspaceId: input.workspaceId, deletedAt: IsNull() },
            })
          : null;
        if (!env) throw notFound('environment', input.environmentId);
      }
      const apiKey = generateCredential(input.environmentId ? 'environmentKey' : 'workspaceKey');
      const row = tx.create(ApiKeyEntity, {
        id: newId('apiKey'),
        workspaceId: input.workspaceId,
        environmentId: input.environmentId ?? null,
        label,
        digest: digestCredential(apiKey),
        keyHint: credentialHint(apiKey),
        createdAt: new Date(),
        revokedAt: null,
      });
      await tx.insert(ApiKeyEntity, row);
      return { ...view(row), api_key: apiKey };
    });
  }

  async list(workspaceId: string): Promise<ApiKeyView[]> {
    const rows = await this.dataSource
      .getRepository(ApiKeyEntity)
      .find({ where: { workspaceId }, order: { id: 'ASC' } });
    return rows.map(view);
  }

  /**
   * Revokes a key. The UPDATE waits for transactions that hold the key's row lock (Poll and Ack take
   * it FOR SHARE), so once this commits the key can no longer commit a claim or an Ack.
   */
  async revoke(id: string): Promise<ApiKeyView> {
    if (!isId('apiKey', id)) throw notFound('api key', id);
    const rows: ApiKeyEntity[] = await this.dataSource.transaction(async (tx) => {
      await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      return tx.find(ApiKeyEntity, { where: { id } });
    });
    const row = rows[0];
    if (!row) throw notFound('api key', id);
    return view(row);
  }
}
