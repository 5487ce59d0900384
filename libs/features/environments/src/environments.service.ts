import { Inject, Injectable } from '@nestjs/common';
import {
  applyMetadataPatch,
  conflict,
  invalidRequest,
  notFound,
  parseMetadata,
  readObject,
} from '@mango/domain-kernel';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import { EnvironmentEntity, insertRow, recordWebhookEvents } from '@mango/persistence';
import { DataSource, EntityManager, IsNull, QueryFailedError } from 'typeorm';
import { parseConfig, parseDescription, parseName, parseScope } from './environment-input';
import { EnvironmentView, renderEnvironment } from './environment.view';

const CREATE_FIELDS = ['name', 'description', 'config', 'metadata', 'scope'];

function isNameConflict(e: unknown): boolean {
  return (
    e instanceof QueryFailedError &&
    (e.driverError as { constraint?: string }).constraint === 'environments_name_key'
  );
}

@Injectable()
export class EnvironmentsService {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async create(workspaceId: string, body: unknown): Promise<EnvironmentView> {
    const o = readObject(body, 'body', CREATE_FIELDS);
    if (o.name === undefined) throw invalidRequest('name is required');
    const now = new Date();
    const env = this.dataSource.manager.create(EnvironmentEntity, {
      id: newId('environment'),
      workspaceId,
      name: parseName(o.name),
      description: parseDescription(o.description) ?? null,
      config: parseConfig(o.config),
      scope: parseScope(o.scope),
      metadata: parseMetadata(o.metadata),
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      deletedAt: null,
    });
    try {
      await this.dataSource.transaction(async (tx) => {
        await insertRow(tx, EnvironmentEntity, env);
        await recordWebhookEvents(tx, workspaceId, [{ type: 'environment.created', id: env.id }], now);
      });
    } catch (e) {
      if (isNameConflict(e)) throw conflict(`an environment named "${env.name}" already exists`);
      throw e;
    }
    return renderEnvironment(env);
  }

  async get(workspaceId: string, id: string): Promise<EnvironmentView> {
    return renderEnvironment(await this.find(this.dataSource.manager, workspaceId, id));
  }

  async update(workspaceId: string, id: string, body: unknown): Promise<EnvironmentView> {
    const o = readObject(body, 'body', CREATE_FIELDS);
    try {
      return await this.dataSource.transaction(async (tx) => {
        const env = await this.find(tx, workspaceId, id, true);
        if (env.archivedAt) throw conflict(`environment ${env.id} is archived and read-only`);
        if (o.name !== undefined) {
          if (o.name === null) throw invalidRequest('name cannot be cleared');
          env.name = parseName(o.name);
        }
        if (o.description !== undefined) env.description = parseDescription(o.description) ?? null;
        if (o.config !== undefined && o.config !== null) env.config = parseConfig(o.config);
        if (o.scope !== undefined) env.scope = parseScope(o.scope);
        env.metadata = applyMetadataPatch(env.metadata, o.metadata, { deleteOnEmpty: true });
        env.updatedAt = new Date();
        await tx.update(
          EnvironmentEntity,
          { id: env.id },
          {
            name: env.name,
            description: env.description,
            config: env.config,
            scope: env.scope,
            metadata: env.metadata,
            updatedAt: env.updatedAt,
          },
        );
        await recordWebhookEvents(
          tx,
          workspaceId,
          [{ type: 'environment.updated', id: env.id }],
          env.updatedAt,
        );
        return renderEnvironment(env);
      });
    } catch (e) {
      if (isNameConflict(e)) throw conflict(`an environment named "${String(o.name)}" already exists`);
      throw e;
    }
  }

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<EnvironmentView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'include_archived']);
    const limit = parseLimit(query.limit);
    const includeArchived = parseBooleanQuery(query.include_archived, 'include_archived');
    const qb = this.dataSource.manager
      .createQueryBuilder(EnvironmentEntity, 'e')
      .where('e.workspace_id = :workspaceId AND e.deleted_at IS NULL', { workspaceId })
      .orderBy('e.id', 'DESC')
      .limit(limit + 1);
    if (!includeArchived) qb.andWhere('e.archived_at IS NULL');
    if (typeof query.page === 'string')
      qb.andWhere('e.id < :after', {
        after: decodeCursor(query.page, { scope: 'environments', order: 'desc' }).after,
      });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (e) => e.id, renderEnvironment, {
      scope: 'environments',
      order: 'desc',
    });
  }

  async archive(workspaceId: string, id: string): Promise<EnvironmentView> {
    return this.dataSource.transaction(async (tx) => {
      const env = await this.find(tx, workspaceId, id, true);
      if (!env.archivedAt) {
        env.archivedAt = new Date();
        await tx.update(EnvironmentEntity, { id: env.id }, { archivedAt: env.archivedAt });
        await recordWebhookEvents(
          tx,
          workspaceId,
          [{ type: 'environment.archived', id: env.id }],
          env.archivedAt,
        );
      }
      return renderEnvironment(env);
    });
  }

  /**
   * Deletes an Environment: its keys stop authenticating at once (the guard ignores keys of deleted
   * Environments) and the name can be reused. The row stays as a tombstone so the id is never reused.
   */
  async delete(workspaceId: string, id: string): Promise<{ id: string; type: 'environment_deleted' }> {
    return this.dataSource.transaction(async (tx) => {
      const env = await this.find(tx, workspaceId, id, true);
      const now = new Date();
      await tx.update(EnvironmentEntity, { id: env.id }, { deletedAt: now });
      await recordWebhookEvents(tx, workspaceId, [{ type: 'environment.deleted', id: env.id }], now);
      await tx.query(
        'UPDATE api_keys SET revoked_at = now() WHERE environment_id = $1 AND revoked_at IS NULL',
        [env.id],
      );
      return { id: env.id, type: 'environment_deleted' as const };
    });
  }

  private async find(
    em: EntityManager,
    workspaceId: string,
    id: string,
    lock = false,
  ): Promise<EnvironmentEntity> {
    if (!isId('environment', id)) throw notFound('environment', id);
    const env = await em.findOne(EnvironmentEntity, {
      where: { id, workspaceId, deletedAt: IsNull() },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!env) throw notFound('environment', id);
    return env;
  }
}
