import { AgentDefinition, parseSessionAgentUpdate } from '@mango/domain-agents';
import {
  applyMetadataPatch,
  canonicalJson,
  conflict,
  invalidRequest,
  readObject,
  readOptionalString,
} from '@mango/domain-kernel';
import { BUDGET_CHANGED, budgetChangeProblem, parseBudget, SESSION_LIMITS } from '@mango/domain-sessions';
import { recordWebhookEvents, SessionEntity, SessionLog } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { SessionView } from './session.view';
import { findSession, renderSessions } from './session-reads';

/** Changing a Session: update (title, metadata, tools, budget), archive and delete. */
export class SessionControl {
  constructor(
    private readonly dataSource: DataSource,
    private readonly log: SessionLog,
  ) {}

  async update(workspaceId: string, id: string, body: unknown): Promise<SessionView> {
    const o = readObject(body, 'body', ['title', 'metadata', 'budget', 'agent', 'vault_ids']);
    if (o.vault_ids !== undefined)
      throw invalidRequest('vault_ids can only be set when the Session is created');
    return this.dataSource.transaction(async (tx) => {
      const session = await findSession(tx, workspaceId, id, true);
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
      if (Object.keys(changed).length === 0) return (await renderSessions(tx, [session]))[0]!;
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
      return (await renderSessions(tx, [session]))[0]!;
    });
  }

  async archive(workspaceId: string, id: string): Promise<SessionView> {
    return this.dataSource.transaction(async (tx) => {
      const session = await findSession(tx, workspaceId, id, true);
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
      return (await renderSessions(tx, [session]))[0]!;
    });
  }

  async delete(workspaceId: string, id: string): Promise<{ id: string; type: 'session_deleted' }> {
    return this.dataSource.transaction(async (tx) => {
      const session = await findSession(tx, workspaceId, id, true);
      const now = new Date();
      // session.deleted, deleted_at, and its live Work stopped through the Work port (ADR 0005).
      await this.log.delete(tx, session, now);
      return { id: session.id, type: 'session_deleted' as const };
    });
  }
}
