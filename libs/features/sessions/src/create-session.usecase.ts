import { AgentDefinition, SkillPin } from '@mango/domain-agents';
import { FileTextReader, invalidRequest } from '@mango/domain-kernel';
import { freezeSkillVersions } from '@mango/feature-agents';
import {
  freezeAgent,
  INITIAL_SESSION_STATUS,
  PriceTable,
  priceOf,
  SessionAgent,
  parseSessionCreate,
} from '@mango/domain-sessions';
import { newId } from '@mango/platform-ids';
import {
  AgentEntity,
  AgentVersionEntity,
  insertSessionMemoryStores,
  memoryMounts,
  planSessionMemoryStores,
  renderSessionMemoryResource,
  EnvironmentEntity,
  insertRow,
  recordWebhookEvents,
  SessionEntity,
  SessionLog,
  SessionThreadRepository,
  VaultEntity,
} from '@mango/persistence';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { checkEventCount } from './event-admission';
import { renderSession, SessionView } from './session.view';
import { checkSkillListings } from './skill-listing';
import { outcomesOf } from './session-reads';
import { admitFileDocuments } from './file-documents';
import { toStored } from './stored-event';
import type { SessionServiceLimits } from './session-limits';
import { TurnAdmission } from './turn-admission';

/**
 * Session create (openapi.yaml `POST /v1/sessions`): the Agent snapshot frozen (Skill pins, roster), every
 * reference checked before anything is written, then the Session, its Memory attachments, its prompt
 * inputs and its initial events in one transaction.
 */
export class CreateSession {
  constructor(
    private readonly dataSource: DataSource,
    private readonly log: SessionLog,
    private readonly threads: SessionThreadRepository,
    private readonly limits: SessionServiceLimits,
    private readonly prices: PriceTable,
    private readonly files?: FileTextReader,
    private readonly turns: TurnAdmission = new TurnAdmission(null),
  ) {}

  /**
   * `options` are for Deployment runs: the Session records its Deployment, and `withinTransaction` runs in
   * the creating transaction after the Session's rows are written (the run record), so both commit or neither.
   */
  async execute(
    workspaceId: string,
    body: unknown,
    options: {
      deploymentId?: string;
      withinTransaction?: (tx: EntityManager, session: SessionEntity) => Promise<void>;
    } = {},
  ): Promise<SessionView> {
    const input = parseSessionCreate(body);
    checkEventCount(input.initialEvents, 'initial_events', this.limits.eventsPerRequest);
    await admitFileDocuments(this.files, workspaceId, input.initialEvents, 'initial_events');
    return this.dataSource.transaction(async (tx) => {
      const env = await tx.findOne(EnvironmentEntity, {
        where: { id: input.environmentId, workspaceId, deletedAt: IsNull() },
      });
      if (!env) throw invalidRequest(`environment ${input.environmentId} not found`);
      if (env.archivedAt) throw invalidRequest(`environment ${env.id} is archived`);
      const agent = await tx.findOne(AgentEntity, { where: { id: input.agent.id, workspaceId } });
      if (!agent) throw invalidRequest(`agent ${input.agent.id} not found`);
      if (agent.archivedAt) throw invalidRequest(`agent ${agent.id} is archived`);
      const version = input.agent.version ?? agent.currentVersion;
      const row = await tx.findOne(AgentVersionEntity, { where: { agentId: agent.id, version } });
      if (!row) throw invalidRequest(`agent ${agent.id} has no version ${version}`);
      // Skill pins are frozen to exact versions now (`latest` resolved): see feature-agents skill-pins.ts.
      const agentSnapshot = await this.freezeRoster(
        tx,
        workspaceId,
        await freezeSkillVersions(
          tx,
          workspaceId,
          freezeAgent(agent.id, version, row.definition as AgentDefinition, input.agent.overrides),
        ),
      );
      const [skills] = await checkSkillListings(tx, [
        { label: 'agent.skills', skills: agentSnapshot.skills },
        ...(agentSnapshot.multiagent?.agents ?? []).flatMap((a, i) =>
          'skills' in a
            ? [{ label: `agent.multiagent.agents[${i}].skills`, skills: a.skills as SkillPin[] }]
            : [],
        ),
      ]);
      const vaultIds = await this.checkVaults(tx, workspaceId, input.vaultIds);
      if (input.budget && !priceOf(agentSnapshot.model.id, this.prices ?? {}))
        throw invalidRequest(
          `a budget needs a priced model; ${agentSnapshot.model.id} has no list price in this deployment`,
        );
      const now = new Date();
      const sessionId = newId('session', now.getTime());
      // Memory attachments are checked and mounted before the Session row is written: the prompt
      // inputs frozen on it name their mounts.
      const memory = await planSessionMemoryStores(tx, workspaceId, sessionId, input.resources);
      const session = tx.create(SessionEntity, {
        id: sessionId,
        workspaceId,
        environmentId: env.id,
        agentId: agent.id,
        agentVersion: version,
        deploymentId: options.deploymentId ?? null,
        agent: agentSnapshot,
        title: input.title,
        status: INITIAL_SESSION_STATUS,
        metadata: input.metadata,
        budget: input.budget,
        vaultIds,
        promptInputs: {
          skills: skills ?? [],
          memoryStores: memoryMounts(memory.map(renderSessionMemoryResource)),
        },
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
        lastSeq: '0',
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
        deletedAt: null,
      });
      await insertRow(tx, SessionEntity, session);
      // The primary Thread is created with its Session, before the first append moves its status.
      await this.threads.createPrimary(tx, session);
      await recordWebhookEvents(tx, workspaceId, [{ type: 'session.created', id: session.id }], now);
      if (input.initialEvents.length) {
        const initial = input.initialEvents.map(toStored);
        // initial_events that start a turn count against the running-Sessions limit: refused, nothing is created.
        await this.turns.admit(tx, session, initial);
        await this.log.append(tx, session, initial, now);
      }
      const resources = await insertSessionMemoryStores(tx, memory);
      if (options.withinTransaction) await options.withinTransaction(tx, session);
      const outcomes = await outcomesOf(tx, [session.id]);
      return { ...renderSession(session), resources, outcome_evaluations: outcomes.get(session.id) ?? [] };
    });
  }

  /** Attached Vaults must exist in the Workspace and not be archived (400 otherwise, like the Agent). */
  private async checkVaults(em: EntityManager, workspaceId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await em.find(VaultEntity, { where: { id: In(ids), workspaceId } });
    for (const id of ids) {
      const v = rows.find((r) => r.id === id);
      if (!v) throw invalidRequest(`vault ${id} not found`);
      if (v.archivedAt) throw invalidRequest(`vault ${id} is archived`);
    }
    return ids;
  }

  /**
   * A coordinator's roster frozen like the Agent itself (openapi.yaml `SessionAgent`): each roster Agent
   * becomes its pinned version's full definition (without a roster of its own — depth 1) with its Skill
   * pins frozen; `self` becomes this snapshot's own definition; advisors stay as they are.
   */
  private async freezeRoster<T extends SessionAgent>(em: EntityManager, workspaceId: string, snapshot: T) {
    if (!snapshot.multiagent) return snapshot;
    const { multiagent: _roster, ...self } = snapshot;
    const agents = [];
    for (const [i, entry] of snapshot.multiagent.agents.entries()) {
      if (entry.type === 'advisor') agents.push(entry);
      else if (entry.type === 'self') agents.push(self);
      else {
        const row = await em.findOne(AgentVersionEntity, {
          where: { agentId: entry.id, version: entry.version },
        });
        const owner = await em.findOne(AgentEntity, { where: { id: entry.id, workspaceId } });
        if (!row || !owner)
          throw invalidRequest(
            `agent.multiagent.agents[${i}]: agent ${entry.id} v${entry.version} not found`,
          );
        const { multiagent: _nested, ...member } = await freezeSkillVersions(
          em,
          workspaceId,
          freezeAgent(entry.id, entry.version, row.definition as AgentDefinition, null),
        );
        agents.push(member);
      }
    }
    return { ...snapshot, multiagent: { type: 'coordinator' as const, agents } };
  }
}
