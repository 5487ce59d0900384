import { Inject, Injectable, Optional } from '@nestjs/common';
import { AgentDefinition, parseSessionAgentUpdate, SkillPin } from '@mango/domain-agents';
import {
  applyMetadataPatch,
  canonicalJson,
  conflict,
  DomainError,
  ErrorCode,
  FILE_TEXT_READER,
  FileTextReader,
  invalidRequest,
  notFound,
  readObject,
  readOptionalString,
} from '@mango/domain-kernel';
import { freezeSkillVersions } from '@mango/feature-agents';
import { Principal, requireLiveToken } from '@mango/feature-auth';
import {
  BUDGET_CHANGED,
  budgetChangeProblem,
  ClientEvent,
  closesOpenCalls,
  freezeAgent,
  INITIAL_SESSION_STATUS,
  PriceTable,
  priceOf,
  SessionAgent,
  isRunnable,
  activeOutcome,
  OUTCOME_EVENT_TYPES,
  OutcomeEvaluation,
  outcomeEvaluations,
  parseBudget,
  resolvedFileRubric,
  parseEventsBody,
  parseSessionCreate,
  SESSION_LIMITS,
} from '@mango/domain-sessions';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import {
  AgentEntity,
  AgentVersionEntity,
  insertSessionMemoryStores,
  memoryMounts,
  planSessionMemoryStores,
  renderSessionMemoryResource,
  requireLiveLease,
  EnvironmentEntity,
  insertRow,
  recordWebhookEvents,
  SessionEntity,
  SessionEventEntity,
  SessionLog,
  sessionMemoryResources,
  VaultEntity,
} from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, currentTraceparent, tracer, tracingEnabled } from '@mango/platform-tracing';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import {
  answeredByPlatform,
  answerOf,
  answerTargetTypes,
  checkBudgetPause,
  checkEventCount,
  checkPoster,
  isAnswerable,
} from './event-admission';
import { asList, EVENT_TYPE, parseOrder, STATUSES, whereCreatedAt } from './session-list-query';
import { EventView, renderEvent, renderSession, SessionView } from './session.view';
import { checkSkillListings } from './skill-listing';

type Query = Record<string, unknown>;

/** Operator model prices (`MANGO_MODEL_PRICES`), provided by the app; absent means the built-in list only. */
export const MODEL_PRICES = Symbol.for('mango.ModelPrices');

const toStored = (e: ClientEvent) => {
  const { type, ...fields } = e;
  // A defined outcome is echoed with its server id (`outc_`), and processed on receipt.
  const body = type === 'user.define_outcome' ? { ...fields, outcome_id: newId('outcome') } : fields;
  // A message or interrupt keeps the request's trace context (an internal `_` field, never rendered):
  // the orchestrator continues that trace for the turn it starts. No trace context while tracing is off.
  const traceparent = type === 'user.message' || type === 'user.interrupt' ? currentTraceparent() : undefined;
  return {
    type,
    body: (traceparent ? { ...body, _traceparent: traceparent } : body) as Record<string, unknown>,
    processed: type === 'user.define_outcome',
    runnable: isRunnable(e),
  };
};

/**
 * Limits that protect one API process under load (operator configuration, documented defaults). Beyond
 * them a request is refused whole (413 or 429) and changes nothing.
 */
export interface SessionServiceLimits {
  /** Events one request may carry (POST …/events and `initial_events`); more is 413. Default 100. */
  eventsPerRequest: number;
  /** Event streams (SSE) this process serves at once; one more is 429 until one closes. Default 10,000. */
  streams: number;
}
export const DEFAULT_SESSION_SERVICE_LIMITS: SessionServiceLimits = {
  eventsPerRequest: 100,
  streams: 10_000,
};
export const SESSION_SERVICE_LIMITS = Symbol.for('mango.SessionServiceLimits');

/** Sessions and their event log (openapi.yaml; docs/architecture.md; docs/api-guide.md "Sessions — choices"). */
@Injectable()
export class SessionsService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
    @Optional() @Inject(FILE_TEXT_READER) private readonly files?: FileTextReader,
    @Optional() @Inject(MODEL_PRICES) private readonly prices: PriceTable = {},
    @Optional()
    @Inject(SESSION_SERVICE_LIMITS)
    private readonly limits: SessionServiceLimits = DEFAULT_SESSION_SERVICE_LIMITS,
    @Optional() @Inject(SessionLog) private readonly log: SessionLog = new SessionLog(dataSource),
  ) {}

  /**
   * File documents become text documents at admission (docs/api-guide.md "Files — choices": bounded UTF-8 only), before any write:
   * the event keeps the text, so deleting the File later changes nothing. Refusals are the reader's
   * (404 another Workspace's or unknown File, 400 image/PDF/too large/not UTF-8).
   */
  private async admitFileDocuments(
    workspaceId: string,
    events: ClientEvent[],
    field = 'events',
  ): Promise<void> {
    for (const [n, e] of events.entries()) {
      if (e.type === 'user.define_outcome' && e.rubric.type === 'file') {
        // A File rubric is read like a File document (bounded UTF-8 text) and kept as text on the event.
        const path = `${field}[${n}]`;
        if (!this.files)
          throw invalidRequest(
            `${path}.rubric: File rubrics need object storage configured on the API (MANGO_S3_ENDPOINT); send the rubric as text`,
          );
        const fileId = e.rubric.file_id;
        const file = await this.files.readText(workspaceId, fileId).catch((err: unknown) => {
          if (err instanceof DomainError && err.code === ErrorCode.NotFound)
            throw invalidRequest(`${path}.rubric: file ${fileId} not found`);
          throw err;
        });
        e.rubric = resolvedFileRubric(path, fileId, file.text);
      }
      if (e.type !== 'user.message') continue;
      for (const [i, block] of e.content.entries()) {
        if (block.type !== 'document' || block.source.type !== 'file') continue;
        if (!this.files)
          throw invalidRequest(
            'File documents need object storage configured on the API (MANGO_S3_ENDPOINT); send the text inline',
          );
        // A body naming a missing resource is a 400 here, as for an unknown agent or tool use.
        const fileId = block.source.file_id;
        const file = await this.files.readText(workspaceId, fileId).catch((err: unknown) => {
          if (err instanceof DomainError && err.code === ErrorCode.NotFound)
            throw invalidRequest(`content[${i}]: file ${fileId} not found`);
          throw err;
        });
        e.content[i] = {
          ...block,
          source: { type: 'text', media_type: 'text/plain', data: file.text },
          title: block.title ?? file.filename,
        };
      }
    }
  }

  /**
   * `options` are for Deployment runs: the Session records its Deployment, and `withinTransaction` runs in
   * the creating transaction after the Session's rows are written (the run record), so both commit or neither.
   */
  async create(
    workspaceId: string,
    body: unknown,
    options: {
      deploymentId?: string;
      withinTransaction?: (tx: EntityManager, session: SessionEntity) => Promise<void>;
    } = {},
  ): Promise<SessionView> {
    const input = parseSessionCreate(body);
    checkEventCount(input.initialEvents, 'initial_events', this.limits.eventsPerRequest);
    await this.admitFileDocuments(workspaceId, input.initialEvents, 'initial_events');
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
      await recordWebhookEvents(tx, workspaceId, [{ type: 'session.created', id: session.id }], now);
      if (input.initialEvents.length)
        await this.log.append(tx, session, input.initialEvents.map(toStored), now);
      const resources = await insertSessionMemoryStores(tx, memory);
      if (options.withinTransaction) await options.withinTransaction(tx, session);
      const outcomes = await this.outcomesOf(tx, [session.id]);
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

  async get(p: Principal, id: string): Promise<SessionView> {
    const session = await this.find(this.dataSource.manager, p.workspaceId, this.sessionIdFor(p, id));
    return (await this.render(this.dataSource.manager, [session]))[0]!;
  }

  /** Sessions on the wire, with their resources (Memory Store attachments) read in one query. */
  private async render(em: EntityManager, sessions: SessionEntity[]): Promise<SessionView[]> {
    const resources = await sessionMemoryResources(
      em,
      sessions.map((s) => s.id),
    );
    const outcomes = await this.outcomesOf(
      em,
      sessions.map((s) => s.id),
    );
    return sessions.map((s) => ({
      ...renderSession(s),
      resources: resources.get(s.id) ?? [],
      outcome_evaluations: outcomes.get(s.id) ?? [],
    }));
  }

  /** `session.outcome_evaluations`, folded from each Session's outcome events (one query). */
  private async outcomesOf(em: EntityManager, ids: string[]): Promise<Map<string, OutcomeEvaluation[]>> {
    const out = new Map<string, OutcomeEvaluation[]>();
    if (ids.length === 0) return out;
    const rows = await em.find(SessionEventEntity, {
      where: { sessionId: In(ids), type: In([...OUTCOME_EVENT_TYPES]) },
      order: { seq: 'ASC' },
    });
    for (const id of ids) {
      const mine = rows.filter((r) => r.sessionId === id);
      if (mine.length) out.set(id, outcomeEvaluations(mine));
    }
    return out;
  }

  async list(workspaceId: string, query: Query): Promise<Page<SessionView> & { prev_page: string | null }> {
    rejectUnknownQuery(query, [
      'limit',
      'page',
      'order',
      'agent_id',
      'agent_version',
      'deployment_id',
      'statuses',
      'statuses[]',
      'include_archived',
      'created_at',
    ]);
    const limit = parseLimit(query.limit);
    const order = parseOrder(query.order, 'desc');
    const statuses = [...asList(query.statuses), ...asList(query['statuses[]'])];
    for (const s of statuses)
      if (!STATUSES.includes(s)) throw invalidRequest(`statuses: unknown status "${s}"`);
    const qb = this.dataSource.manager
      .createQueryBuilder(SessionEntity, 's')
      .where('s.workspace_id = :workspaceId AND s.deleted_at IS NULL', { workspaceId })
      .orderBy('s.id', order === 'asc' ? 'ASC' : 'DESC')
      .limit(limit + 1);
    if (!parseBooleanQuery(query.include_archived, 'include_archived')) qb.andWhere('s.archived_at IS NULL');
    if (query.agent_id !== undefined) {
      if (!isId('agent', query.agent_id)) throw invalidRequest('agent_id must be an agent_ id');
      qb.andWhere('s.agent_id = :agentId', { agentId: query.agent_id });
    }
    if (query.agent_version !== undefined) {
      if (typeof query.agent_version !== 'string' || !/^[1-9]\d{0,8}$/.test(query.agent_version))
        throw invalidRequest('agent_version must be an integer ≥ 1');
      qb.andWhere('s.agent_version = :v', { v: Number(query.agent_version) });
    }
    if (query.deployment_id !== undefined) {
      if (!isId('deployment', query.deployment_id)) throw invalidRequest('deployment_id must be a depl_ id');
      qb.andWhere('s.deployment_id = :deploymentId', { deploymentId: query.deployment_id });
    }
    if (statuses.length) qb.andWhere('s.status IN (:...statuses)', { statuses });
    whereCreatedAt(qb, 's', query.created_at);
    let first = true;
    if (typeof query.page === 'string') {
      const after = decodeCursor(query.page, { scope: 'sessions', order }).after;
      qb.andWhere(order === 'asc' ? 's.id > :after' : 's.id < :after', { after });
      first = false;
    } else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await qb.getMany();
    const page = toPage(rows, limit, (s) => s.id, renderSession, { scope: 'sessions', order });
    // prev_page pages back towards the start in the opposite order; null on the first page.
    const prev =
      !first && rows.length
        ? toPage([rows[0]!, rows[0]!], 1, (s) => s.id, renderSession, {
            scope: 'sessions',
            order: order === 'asc' ? 'desc' : 'asc',
          }).next_page
        : null;
    const rendered = new Map(
      (await this.render(this.dataSource.manager, rows.slice(0, limit))).map((v) => [v.id, v]),
    );
    return { ...page, data: page.data.map((v) => rendered.get(v.id) ?? v), prev_page: prev };
  }

  async update(workspaceId: string, id: string, body: unknown): Promise<SessionView> {
    const o = readObject(body, 'body', ['title', 'metadata', 'budget', 'agent', 'vault_ids']);
    if (o.vault_ids !== undefined)
      throw invalidRequest('vault_ids can only be set when the Session is created');
    return this.dataSource.transaction(async (tx) => {
      const session = await this.find(tx, workspaceId, id, true);
      if (session.archivedAt) throw conflict(`session ${session.id} is archived`);
      const changed: Record<string, unknown> = {};
      if (o.title !== undefined) {
        const title = readOptionalString(o.title, 'title', { max: SESSION_LIMITS.title }) ?? null;
        if (title !== session.title) changed.title = session.title = title;
      }
      if (o.metadata !== undefined && o.metadata !== null) {
        const next = applyMetadataPatch(session.metadata, o.metadata);
        if (JSON.stringify(next) !== JSON.stringify(session.metadata))
          changed.metadata = session.metadata = next;
      }
      if (o.agent !== undefined) {
        const current = session.agent as unknown as AgentDefinition;
        const next = parseSessionAgentUpdate(current, o.agent);
        // Stored jsonb reorders keys: compare canonical forms.
        const before = { tools: current.tools, mcp_servers: current.mcp_servers };
        if (canonicalJson(next) !== canonicalJson(before)) {
          // The next model request sees the new tools; a turn in flight must not change under it.
          if (session.status !== 'idle')
            throw conflict(
              `session ${session.id} is ${session.status}; agent tools change only while it is idle`,
            );
          changed.agent = session.agent = { ...session.agent, ...next };
        }
      }
      if (o.budget !== undefined) {
        if (o.budget === null) {
          if (session.budget !== null) changed.budget = session.budget = null;
        } else {
          if (session.budget === null)
            throw invalidRequest('a budget can only be set when the Session is created');
          const next = parseBudget(o.budget);
          if (JSON.stringify(next) !== JSON.stringify(session.budget)) {
            const problem = budgetChangeProblem(next, (session.usage as { list_cost?: null }).list_cost);
            if (problem) throw invalidRequest(problem);
            changed.budget = session.budget = next;
          }
        }
      }
      if (Object.keys(changed).length === 0) return (await this.render(tx, [session]))[0]!;
      const now = new Date();
      await tx.update(
        SessionEntity,
        { id: session.id },
        {
          title: session.title,
          metadata: session.metadata,
          budget: session.budget,
          agent: session.agent as SessionEntity['agent'] & object,
        },
      );
      await this.log.append(
        tx,
        session,
        [
          {
            type: 'session.updated',
            body: changed,
            processed: true,
            runnable: false,
            ...('budget' in changed ? { outboxKind: BUDGET_CHANGED } : {}),
          },
        ],
        now,
      );
      return (await this.render(tx, [session]))[0]!;
    });
  }

  async archive(workspaceId: string, id: string): Promise<SessionView> {
    return this.dataSource.transaction(async (tx) => {
      const session = await this.find(tx, workspaceId, id, true);
      if (!session.archivedAt) {
        session.archivedAt = new Date();
        await tx.update(SessionEntity, { id: session.id }, { archivedAt: session.archivedAt });
        await recordWebhookEvents(
          tx,
          workspaceId,
          [{ type: 'session.archived', id: session.id }],
          session.archivedAt,
        );
      }
      return (await this.render(tx, [session]))[0]!;
    });
  }

  async delete(workspaceId: string, id: string): Promise<{ id: string; type: 'session_deleted' }> {
    return this.dataSource.transaction(async (tx) => {
      const session = await this.find(tx, workspaceId, id, true);
      const now = new Date();
      // session.deleted, deleted_at, and its live Work stopped through the Work port (ADR 0005).
      await this.log.delete(tx, session, now);
      return { id: session.id, type: 'session_deleted' as const };
    });
  }

  // ── Events ───────────────────────────────────────────────────────────────────────────────────────

  /**
   * Appends client events. A Workspace key sends messages and interrupts; the Session's own Work token
   * sends only `user.tool_result`, checked against its live lease in the same transaction. Each tool call
   * is answered once: an identical retry returns the stored event, a different answer is 409.
   */
  async sendEvents(p: Principal, id: string, body: unknown): Promise<{ data: EventView[] }> {
    // A dead Work token is 401 whatever it sends (before any question of shape or permission).
    requireLiveToken(p);
    const events = parseEventsBody(body);
    checkEventCount(events, 'events', this.limits.eventsPerRequest);
    checkPoster(p.kind === 'work', events);
    await this.admitFileDocuments(p.workspaceId, events);
    // Tool results accepted in this call, observed once the transaction committed.
    const answered: Array<{
      tool: string;
      kind: 'sandbox' | 'custom';
      isError: boolean;
      since: Date;
      callId: string;
      traceparent?: string;
    }> = [];
    const out = await this.dataSource.transaction(async (tx) => {
      const session = await this.find(tx, p.workspaceId, this.sessionIdFor(p, id), true);
      if (session.archivedAt) throw conflict(`session ${session.id} is archived; events are not accepted`);
      if (session.status === 'terminated') throw conflict(`session ${session.id} is terminated`);
      // The Work item's current token and live lease, held FOR SHARE until the append commits.
      if (p.kind === 'work') await requireLiveLease(tx, p, session.id);
      const paused = await this.pausedAtBudget(tx, session);
      checkBudgetPause(paused, events);
      // One outcome at a time: a new one is accepted once the current one ended.
      if (events.some((e) => e.type === 'user.define_outcome')) {
        const current = activeOutcome(
          await tx.find(SessionEventEntity, {
            where: { sessionId: session.id, type: In([...OUTCOME_EVENT_TYPES]) },
            order: { seq: 'ASC' },
          }),
        );
        if (current)
          throw conflict(
            `session ${session.id} is still working on outcome ${current.outcome_id} (${current.result}); define the next outcome once it ends`,
          );
      }
      const now = new Date();
      const stored: EventView[] = [];
      const fresh: Array<ReturnType<typeof toStored>> = [];
      for (const e of events) {
        const answer = answerOf(e);
        if (!answer) {
          // An interrupt at a budget pause is accepted and ignored: there is no turn to stop.
          if (!(paused && e.type === 'user.interrupt')) fresh.push(toStored(e));
          continue;
        }
        // A confirmation answers a sandbox or an MCP call that asked; results answer only their own kind.
        const target = await tx.findOne(SessionEventEntity, {
          where: { id: answer.targetId, sessionId: session.id, type: In(answerTargetTypes(answer)) },
        });
        if (target && answeredByPlatform(target))
          throw invalidRequest(
            `${answer.targetId} was run by Mango or the model endpoint; it takes no ${e.type}`,
          );
        if (!target || !isAnswerable(answer, target)) {
          throw invalidRequest(
            `${answer.targetId} is not ${answer.needsAsk ? 'an agent.tool_use awaiting confirmation' : `an ${answer.targetType}`} of this session`,
          );
        }
        if (e.type === 'user.tool_result') await this.requireRunnable(tx, session.id, target);
        // Each call is answered once: an identical retry returns the stored event, a different answer is 409.
        const prior = await tx.findOne(SessionEventEntity, {
          where: answer.key
            ? { sessionId: session.id, idempotencyKey: answer.key }
            : { sessionId: session.id, toolUseId: answer.targetId },
        });
        if (prior) {
          if (canonicalJson(prior.body) !== canonicalJson(answer.body))
            throw conflict(`${answer.targetId} already has a different ${e.type}`);
          stored.push(renderEvent(prior));
          continue;
        }
        await this.requireOpen(tx, session.id, target, e.type);
        if (e.type === 'user.tool_result' || e.type === 'user.custom_tool_result')
          answered.push({
            tool: String(target.body.name ?? 'unknown'),
            kind: e.type === 'user.tool_result' ? 'sandbox' : 'custom',
            isError: e.is_error === true,
            since: target.createdAt,
            callId: target.id,
            // The call's span joins the trace of the turn that made it (the message before the call).
            traceparent: tracingEnabled()
              ? await this.turnTraceparent(tx, session.id, target.seq)
              : undefined,
          });
        fresh.push({
          ...toStored(e),
          processed: true,
          ...(answer.key ? { idempotencyKey: answer.key } : { toolUseId: answer.targetId }),
        });
      }
      const rows = await this.log.append(tx, session, fresh, now);
      return { data: [...stored, ...rows.map(renderEvent)], now, sessionId: session.id };
    });
    for (const a of answered) {
      const outcome = a.isError ? 'error' : 'ok';
      this.metrics.toolCallDuration.observe(
        { tool: a.tool, kind: a.kind, outcome },
        Math.max(0, (out.now.getTime() - a.since.getTime()) / 1000),
      );
      // `mango.tool_use <name>`: from the tool use to its result (ids and outcome only, never input or output).
      tracer()
        .startSpan(
          `mango.tool_use ${a.tool}`,
          {
            startTime: a.since,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': a.tool,
              'gen_ai.tool.call.id': a.callId,
              'mango.session.id': out.sessionId,
              'mango.tool.kind': a.kind,
              'mango.outcome': outcome,
            },
          },
          contextFrom(a.traceparent),
        )
        .end(out.now);
    }
    return { data: out.data };
  }

  /** The `_traceparent` the API stored on the latest user.message before `seq` (the turn's trace). */
  private async turnTraceparent(
    tx: EntityManager,
    sessionId: string,
    seq: string,
  ): Promise<string | undefined> {
    const [row]: Array<{ tp: string | null }> = await tx.query(
      `SELECT body->>'_traceparent' AS tp FROM session_events
        WHERE session_id = $1 AND type = 'user.message' AND seq < $2 ORDER BY seq DESC LIMIT 1`,
      [sessionId, String(seq)],
    );
    return row?.tp ?? undefined;
  }

  /**
   * A call an interrupt (or a turn that ended without it) closed takes no new answer: the model already
   * saw it as interrupted. (Checked after the stored-answer lookup, so an identical retry still succeeds.)
   */
  private async requireOpen(
    tx: EntityManager,
    sessionId: string,
    call: SessionEventEntity,
    type: string,
  ): Promise<void> {
    const later: Array<Pick<SessionEventEntity, 'type' | 'body'>> = await tx
      .createQueryBuilder(SessionEventEntity, 'e')
      .select(['e.type', 'e.body'])
      .where('e.session_id = :sessionId AND e.seq > :seq', { sessionId, seq: call.seq })
      .andWhere(`(e.type = 'user.interrupt' OR e.type = 'session.status_idle')`)
      .orderBy('e.seq', 'ASC')
      .getMany();
    if (later.some((e) => closesOpenCalls(e)))
      throw conflict(`${call.id} was interrupted before it completed; it takes no ${type}`);
  }

  /**
   * Paused at the budget gate: the last turn ended idle with `budget_reached` and no budget change has
   * been accepted since (a change wakes the workflow, which resumes the turn).
   */
  private async pausedAtBudget(tx: EntityManager, session: SessionEntity): Promise<boolean> {
    // Without a budget there is no pause (removing the budget is itself what lifts one).
    if (session.status !== 'idle' || session.budget === null) return false;
    const rows: Array<{ type: string; reason: string | null }> = await tx.query(
      `SELECT type, body->'stop_reason'->>'type' AS reason FROM session_events
        WHERE session_id = $1 AND (type IN ('session.status_idle', 'session.status_running') OR (type = 'session.updated' AND body ? 'budget'))
        ORDER BY seq DESC LIMIT 1`,
      [session.id],
    );
    return rows[0]?.type === 'session.status_idle' && rows[0].reason === 'budget_reached';
  }

  /** A denied call never runs; an `ask` call runs only after a persisted allow. */
  private async requireRunnable(
    tx: EntityManager,
    sessionId: string,
    use: SessionEventEntity,
  ): Promise<void> {
    const permission = use.body.evaluated_permission;
    if (permission === 'deny') throw conflict(`${use.id} was denied by policy and is never run`);
    if (permission !== 'ask') return;
    const confirmation = await tx.findOne(SessionEventEntity, {
      where: { sessionId, idempotencyKey: `confirmation:${use.id}` },
    });
    if (confirmation?.body.result !== 'allow')
      throw conflict(`${use.id} has no allow confirmation; it must not run`);
  }

  /** A Work token reads and writes only its own Session; anything else is invisible (404). */
  sessionIdFor(p: Principal, id: string): string {
    if (p.kind === 'work') {
      requireLiveToken(p);
      if (p.sessionId !== id) throw notFound('session', id);
    }
    return id;
  }

  async listEvents(p: Principal, id: string, query: Query): Promise<Page<EventView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'order', 'types', 'types[]', 'created_at']);
    const session = await this.find(this.dataSource.manager, p.workspaceId, this.sessionIdFor(p, id));
    const limit = parseLimit(query.limit);
    const order = parseOrder(query.order, 'asc');
    const types = [...asList(query.types), ...asList(query['types[]'])];
    for (const t of types)
      if (!EVENT_TYPE.test(t)) throw invalidRequest(`types: "${t}" is not an event type`);
    const scope = `events:${session.id}`;
    const qb = this.dataSource.manager
      .createQueryBuilder(SessionEventEntity, 'e')
      .where('e.session_id = :id', { id: session.id })
      .orderBy('e.seq', order === 'asc' ? 'ASC' : 'DESC')
      .limit(limit + 1);
    if (types.length) qb.andWhere('e.type IN (:...types)', { types });
    whereCreatedAt(qb, 'e', query.created_at);
    if (typeof query.page === 'string') {
      const after = decodeCursor(query.page, { scope, order }).after;
      if (!/^\d+$/.test(after)) throw invalidRequest('page is not a valid page cursor');
      qb.andWhere(order === 'asc' ? 'e.seq > :after' : 'e.seq < :after', { after });
    } else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (e) => e.seq, renderEvent, { scope, order });
  }

  private async find(
    em: EntityManager,
    workspaceId: string,
    id: string,
    lock = false,
  ): Promise<SessionEntity> {
    if (!isId('session', id)) throw notFound('session', id);
    const s = await em.findOne(SessionEntity, {
      where: { id, workspaceId, deletedAt: IsNull() },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!s) throw notFound('session', id);
    return s;
  }
}
