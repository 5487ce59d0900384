import { invalidRequest } from '@mango/domain-kernel';
import { Principal } from '@mango/feature-auth';
import { isId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  rejectUnknownQuery,
  encodeCursor,
  toPage,
} from '@mango/platform-pagination';
import { primaryThreadId, SessionEntity, SessionEventEntity } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { asList, EVENT_TYPE, parseOrder, STATUSES, whereCreatedAt } from './session-list-query';
import { EventView, renderEvent, renderSession, SessionView } from './session.view';
import { findSession, renderSessions, sessionIdFor, Query } from './session-reads';
import { type EventFilter, threadEventFilter } from './session-thread-reads';

/** Reading Sessions: one, a page of them, and a page of one Session's events. */
export class SessionQueries {
  constructor(private readonly dataSource: DataSource) {}

  async get(p: Principal, id: string): Promise<SessionView> {
    const session = await findSession(this.dataSource.manager, p.workspaceId, sessionIdFor(p, id));
    return (await renderSessions(this.dataSource.manager, [session]))[0]!;
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
    const cursor =
      typeof query.page === 'string'
        ? decodeCursor(query.page, { scope: 'sessions', order, backwards: true })
        : undefined;
    if (query.page !== undefined && !cursor) throw invalidRequest('page must be a string');
    // A prev_page cursor reads the items just before its key, walking the opposite way, then puts them
    // back in the list's order: the previous page exactly as it was going forwards.
    const back = cursor?.direction === 'before';
    const ascending = (order === 'asc') !== back;
    qb.orderBy('s.id', ascending ? 'ASC' : 'DESC');
    if (cursor) qb.andWhere(ascending ? 's.id > :key' : 's.id < :key', { key: cursor.after });
    const fetched = await qb.getMany();
    const more = fetched.length > limit;
    const rows = back ? fetched.slice(0, limit).reverse() : fetched.slice(0, limit);
    const first = rows[0];
    const last = rows[rows.length - 1];
    const page: Page<SessionView> = {
      data: rows.map(renderSession),
      // Going back, there is always a next page: the one the cursor came from.
      next_page: (back ? last : more && last)
        ? encodeCursor({ scope: 'sessions', order, after: last!.id })
        : null,
    };
    // A forward page reached through a cursor has a previous page; a backward one while items remain before
    // it; the first page has none.
    const prev =
      first && (back ? more : cursor)
        ? encodeCursor({ scope: 'sessions', order, after: first.id, direction: 'before' })
        : null;
    const rendered = new Map((await renderSessions(this.dataSource.manager, rows)).map((v) => [v.id, v]));
    return { ...page, data: page.data.map((v) => rendered.get(v.id) ?? v), prev_page: prev };
  }

  /** A page of a Session's events; `thread` narrows it to what one Thread's history shows (ADR 0017). */
  async listEvents(
    p: Principal,
    id: string,
    query: Query,
    thread?: { id: string; filter: EventFilter },
  ): Promise<Page<EventView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'order', 'types', 'types[]', 'created_at']);
    const session = await findSession(this.dataSource.manager, p.workspaceId, sessionIdFor(p, id));
    const limit = parseLimit(query.limit);
    const order = parseOrder(query.order, 'asc');
    const types = [...asList(query.types), ...asList(query['types[]'])];
    for (const t of types)
      if (!EVENT_TYPE.test(t)) throw invalidRequest(`types: "${t}" is not an event type`);
    const scope = thread ? `events:${session.id}:${thread.id}` : `events:${session.id}`;
    const qb = this.dataSource.manager
      .createQueryBuilder(SessionEventEntity, 'e')
      .where('e.session_id = :id', { id: session.id })
      .orderBy('e.seq', order === 'asc' ? 'ASC' : 'DESC')
      .limit(limit + 1);
    if (types.length) qb.andWhere('e.type IN (:...types)', { types });
    // The Session's own events route is its primary Thread's view for a Workspace key (hosted §5.8: no
    // delegate's replies or tool calls); the Session's Work token reads the whole log (every Thread's calls).
    const filter =
      thread?.filter ??
      (p.kind === 'work'
        ? undefined
        : threadEventFilter({ kind: 'thread', threadId: primaryThreadId(session.id), primary: true }));
    if (filter) qb.andWhere(filter.where, filter.params);
    whereCreatedAt(qb, 'e', query.created_at);
    if (typeof query.page === 'string') {
      const after = decodeCursor(query.page, { scope, order }).after;
      if (!/^\d+$/.test(after)) throw invalidRequest('page is not a valid page cursor');
      qb.andWhere(order === 'asc' ? 'e.seq > :after' : 'e.seq < :after', { after });
    } else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (e) => e.seq, renderEvent, { scope, order });
  }
}
