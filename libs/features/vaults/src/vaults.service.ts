import { Inject, Injectable } from '@nestjs/common';
import {
  applyMetadataPatch,
  conflict,
  invalidRequest,
  notFound,
  parseMetadata,
  readObject,
} from '@mango/domain-kernel';
import { readVaultDisplayName } from '@mango/domain-vaults';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import { insertRow, recordWebhookEvents, VaultEntity } from '@mango/persistence';
import { DataSource, EntityManager } from 'typeorm';
import { renderVault, VaultView } from './vault.views';

const CURSOR = { scope: 'vaults', order: 'desc' as const };

/** Finds a Vault of the Workspace (another Workspace's, a wrong prefix or a missing one: 404). */
export async function findVault(
  em: EntityManager,
  workspaceId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<VaultEntity> {
  if (!isId('vault', id)) throw notFound('vault', id);
  const qb = em
    .createQueryBuilder(VaultEntity, 'v')
    .where('v.id = :id AND v.workspace_id = :workspaceId', { id, workspaceId });
  if (opts.lock) qb.setLock('pessimistic_write');
  const v = await qb.getOne();
  if (!v) throw notFound('vault', id);
  return v;
}

/** Vaults (openapi.yaml, Vaults; docs/api-guide.md, Vaults): create, list, get, update, archive, delete (cascading their credentials). */
@Injectable()
export class VaultsService {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async create(workspaceId: string, body: unknown): Promise<VaultView> {
    const o = readObject(body, 'body', ['display_name', 'metadata']);
    if (o.display_name === undefined) throw invalidRequest('display_name is required');
    const now = new Date();
    const vault = this.dataSource.manager.create(VaultEntity, {
      id: newId('vault', now.getTime()),
      workspaceId,
      displayName: readVaultDisplayName(o.display_name),
      metadata: parseMetadata(o.metadata),
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    });
    await this.dataSource.transaction(async (tx) => {
      await insertRow(tx, VaultEntity, vault);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'vault.created', id: vault.id }], now);
    });
    return renderVault(vault);
  }

  async get(workspaceId: string, id: string): Promise<VaultView> {
    return renderVault(await findVault(this.dataSource.manager, workspaceId, id));
  }

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<VaultView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'include_archived']);
    const limit = parseLimit(query.limit);
    const qb = this.dataSource.manager
      .createQueryBuilder(VaultEntity, 'v')
      .where('v.workspace_id = :workspaceId', { workspaceId })
      .orderBy('v.id', 'DESC')
      .limit(limit + 1);
    if (!parseBooleanQuery(query.include_archived, 'include_archived')) qb.andWhere('v.archived_at IS NULL');
    if (typeof query.page === 'string')
      qb.andWhere('v.id < :after', { after: decodeCursor(query.page, CURSOR).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (v) => v.id, renderVault, CURSOR);
  }

  async update(workspaceId: string, id: string, body: unknown): Promise<VaultView> {
    const o = readObject(body, 'body', ['display_name', 'metadata']);
    return this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, id, { lock: true });
      if (vault.archivedAt) throw conflict(`vault ${vault.id} is archived and cannot be updated`);
      const next = {
        displayName: o.display_name === undefined ? vault.displayName : readVaultDisplayName(o.display_name),
        metadata: applyMetadataPatch(vault.metadata, o.metadata),
      };
      if (
        next.displayName === vault.displayName &&
        JSON.stringify(next.metadata) === JSON.stringify(vault.metadata)
      )
        return renderVault(vault);
      const updatedAt = new Date();
      await tx.update(VaultEntity, { id: vault.id }, { ...next, updatedAt });
      return renderVault({ ...vault, ...next, updatedAt });
    });
  }

  /**
   * Archiving makes the Vault read-only (idempotent): no credential changes, and new Sessions cannot
   * attach it. Sessions that already attached it keep using its credentials.
   */
  async archive(workspaceId: string, id: string): Promise<VaultView> {
    return this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, id, { lock: true });
      if (vault.archivedAt) return renderVault(vault);
      const now = new Date();
      await tx.update(VaultEntity, { id: vault.id }, { archivedAt: now, updatedAt: now });
      await recordWebhookEvents(tx, workspaceId, [{ type: 'vault.archived', id: vault.id }], now);
      return renderVault({ ...vault, archivedAt: now, updatedAt: now });
    });
  }

  /** Deletes the Vault and (by cascade) every credential with its sealed secrets. */
  async delete(workspaceId: string, id: string): Promise<{ id: string; type: 'vault_deleted' }> {
    await this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, id, { lock: true });
      await tx.delete(VaultEntity, { id: vault.id });
      await recordWebhookEvents(tx, workspaceId, [{ type: 'vault.deleted', id: vault.id }], new Date());
    });
    return { id, type: 'vault_deleted' };
  }
}
