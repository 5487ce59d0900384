import { Inject, Injectable } from '@nestjs/common';
import {
  AgentDefinition,
  AgentDraft,
  checkExpectedVersion,
  parseAgentCreate,
  parseAgentUpdate,
  resolveRoster,
  RosterAgentFacts,
  rosterAgentIds,
  sameDefinition,
} from '@mango/domain-agents';
import { conflict, invalidRequest, notFound } from '@mango/domain-kernel';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  parseTimeRange,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import {
  AgentEntity,
  AgentVersionEntity,
  insertRow,
  pauseActiveDeployments,
  recordWebhookEvents,
} from '@mango/persistence';
import { DataSource, EntityManager } from 'typeorm';
import { AgentView, renderAgent } from './agent.view';
import { checkSkillPins } from './skill-pins';

type Query = Record<string, unknown>;

@Injectable()
export class AgentsService {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async create(workspaceId: string, body: unknown): Promise<AgentView> {
    const draft = parseAgentCreate(body);
    return this.dataSource.transaction(async (tx) => {
      const id = newId('agent');
      const definition = resolveRoster(draft, id, await this.rosterFacts(tx, workspaceId, draft));
      await checkSkillPins(tx, workspaceId, definition.skills);
      const now = new Date();
      const agent = tx.create(AgentEntity, {
        id,
        workspaceId,
        currentVersion: 1,
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
      });
      const version = tx.create(AgentVersionEntity, { agentId: id, version: 1, definition, createdAt: now });
      await tx.insert(AgentEntity, agent);
      await insertRow(tx, AgentVersionEntity, version);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'agent.created', id }], now);
      return renderAgent(agent, version);
    });
  }

  async get(workspaceId: string, agentId: string, query: Query): Promise<AgentView> {
    rejectUnknownQuery(query, ['version']);
    let wanted: number | undefined;
    if (query.version !== undefined) {
      if (typeof query.version !== 'string' || !/^[1-9]\d{0,8}$/.test(query.version))
        throw invalidRequest('version must be an integer ≥ 1');
      wanted = Number(query.version);
    }
    const agent = await this.findAgent(this.dataSource.manager, workspaceId, agentId);
    const version = await this.dataSource.manager.findOne(AgentVersionEntity, {
      where: { agentId: agent.id, version: wanted ?? agent.currentVersion },
    });
    if (!version) throw notFound(`version ${wanted} of agent`, agent.id);
    return renderAgent(agent, version);
  }

  async update(workspaceId: string, agentId: string, body: unknown): Promise<AgentView> {
    return this.dataSource.transaction(async (tx) => {
      const agent = await this.findAgent(tx, workspaceId, agentId, true);
      const current = await tx.findOneOrFail(AgentVersionEntity, {
        where: { agentId: agent.id, version: agent.currentVersion },
      });
      const { draft, expectedVersion } = parseAgentUpdate(current.definition, body);
      checkExpectedVersion(expectedVersion, agent.currentVersion);
      if (agent.archivedAt) throw conflict(`agent ${agent.id} is archived and read-only`);
      const definition = resolveRoster(draft, agent.id, await this.rosterFacts(tx, workspaceId, draft));
      if (sameDefinition(definition, current.definition)) return renderAgent(agent, current);
      await checkSkillPins(tx, workspaceId, definition.skills, current.definition.skills);
      const now = new Date();
      const next = tx.create(AgentVersionEntity, {
        agentId: agent.id,
        version: agent.currentVersion + 1,
        definition,
        createdAt: now,
      });
      await insertRow(tx, AgentVersionEntity, next);
      agent.currentVersion = next.version;
      agent.updatedAt = now;
      await tx.update(AgentEntity, { id: agent.id }, { currentVersion: next.version, updatedAt: now });
      await recordWebhookEvents(tx, workspaceId, [{ type: 'agent.updated', id: agent.id }], now);
      return renderAgent(agent, next);
    });
  }

  async list(workspaceId: string, query: Query): Promise<Page<AgentView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'created_at', 'include_archived']);
    const limit = parseLimit(query.limit);
    const includeArchived = parseBooleanQuery(query.include_archived, 'include_archived');
    const range = parseTimeRange(query.created_at, 'created_at', ['gte', 'lte']);
    const qb = this.dataSource.manager
      .createQueryBuilder(AgentEntity, 'a')
      .innerJoinAndMapOne(
        'a.current',
        AgentVersionEntity,
        'v',
        'v.agent_id = a.id AND v.version = a.current_version',
      )
      .where('a.workspace_id = :workspaceId', { workspaceId })
      .orderBy('a.id', 'DESC')
      .limit(limit + 1);
    if (!includeArchived) qb.andWhere('a.archived_at IS NULL');
    if (range.gte) qb.andWhere('a.created_at >= :gte', { gte: range.gte });
    if (range.lte) qb.andWhere('a.created_at <= :lte', { lte: range.lte });
    if (typeof query.page === 'string')
      qb.andWhere('a.id < :after', {
        after: decodeCursor(query.page, { scope: 'agents', order: 'desc' }).after,
      });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = (await qb.getMany()) as Array<AgentEntity & { current: AgentVersionEntity }>;
    return toPage(
      rows,
      limit,
      (r) => r.id,
      (r) => renderAgent(r, r.current),
      { scope: 'agents', order: 'desc' },
    );
  }

  async archive(workspaceId: string, agentId: string): Promise<AgentView> {
    return this.dataSource.transaction(async (tx) => {
      const agent = await this.findAgent(tx, workspaceId, agentId, true);
      if (!agent.archivedAt) {
        agent.archivedAt = new Date();
        await tx.update(AgentEntity, { id: agent.id }, { archivedAt: agent.archivedAt });
        // Agent-archive propagation: the Deployments pinned to this Agent pause at once with
        // agent_archived_error (their scheduled triggers are skipped while paused).
        const paused = await pauseActiveDeployments(
          tx,
          'agent_id = $1',
          [agent.id],
          'agent_archived_error',
          agent.archivedAt,
        );
        await recordWebhookEvents(
          tx,
          workspaceId,
          [
            { type: 'agent.archived', id: agent.id },
            ...paused.map((d) => ({ type: 'deployment.paused', id: d.id })),
          ],
          agent.archivedAt,
        );
      }
      const version = await tx.findOneOrFail(AgentVersionEntity, {
        where: { agentId: agent.id, version: agent.currentVersion },
      });
      return renderAgent(agent, version);
    });
  }

  async versions(workspaceId: string, agentId: string, query: Query): Promise<Page<AgentView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    const agent = await this.findAgent(this.dataSource.manager, workspaceId, agentId);
    const qb = this.dataSource.manager
      .createQueryBuilder(AgentVersionEntity, 'v')
      .where('v.agent_id = :id', { id: agent.id })
      .orderBy('v.version', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string') {
      const after = decodeCursor(query.page, { scope: `agent_versions:${agent.id}`, order: 'desc' }).after;
      if (!/^\d+$/.test(after)) throw invalidRequest('page is not a valid page cursor');
      qb.andWhere('v.version < :after', { after: Number(after) });
    } else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await qb.getMany();
    return toPage(
      rows,
      limit,
      (r) => String(r.version),
      (r) => renderAgent(agent, r),
      { scope: `agent_versions:${agent.id}`, order: 'desc' },
    );
  }

  private async findAgent(
    em: EntityManager,
    workspaceId: string,
    agentId: string,
    lock = false,
  ): Promise<AgentEntity> {
    if (!isId('agent', agentId)) throw notFound('agent', agentId);
    const agent = await em.findOne(AgentEntity, {
      where: { id: agentId, workspaceId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!agent) throw notFound('agent', agentId);
    return agent;
  }

  private async rosterFacts(
    em: EntityManager,
    workspaceId: string,
    draft: AgentDraft,
  ): Promise<Map<string, RosterAgentFacts>> {
    const ids = rosterAgentIds(draft);
    const facts = new Map<string, RosterAgentFacts>();
    if (ids.length === 0) return facts;
    const agents = await em.find(AgentEntity, { where: ids.map((id) => ({ id, workspaceId })) });
    for (const a of agents) {
      const versions = await em.find(AgentVersionEntity, { where: { agentId: a.id } });
      const byVersion = new Map(
        versions.map((v) => [v.version, (v.definition as AgentDefinition).multiagent !== null]),
      );
      facts.set(a.id, {
        id: a.id,
        currentVersion: a.currentVersion,
        archived: a.archivedAt !== null,
        hasMultiagent: (v) => byVersion.get(v),
      });
    }
    return facts;
  }
}
