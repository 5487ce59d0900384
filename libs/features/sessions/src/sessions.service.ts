import { Inject, Injectable, Optional } from '@nestjs/common';
import { FILE_TEXT_READER, FileTextReader } from '@mango/domain-kernel';
import type { PriceTable } from '@mango/domain-sessions';
import type { Principal } from '@mango/feature-auth';
import { SessionLog, SessionThreadRepository, type SessionEntity } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import type { Page } from '@mango/platform-pagination';
import { DataSource, EntityManager } from 'typeorm';
import { CreateSession } from './create-session.usecase';
import { SendEvents } from './send-events.usecase';
import {
  DEFAULT_SESSION_SERVICE_LIMITS,
  MODEL_PRICES,
  SESSION_SERVICE_LIMITS,
  SessionServiceLimits,
} from './session-limits';
import { SessionControl } from './session-control.usecase';
import { SessionQueries } from './session-queries';
import { TurnAdmission } from './turn-admission';
import { type Query, sessionIdFor } from './session-reads';
import type { EventView, SessionView } from './session.view';
import type { EventFilter } from './session-thread-reads';

export {
  DEFAULT_SESSION_SERVICE_LIMITS,
  MODEL_PRICES,
  SESSION_SERVICE_LIMITS,
  type SessionServiceLimits,
} from './session-limits';

/**
 * Sessions and their event log (openapi.yaml; docs/architecture.md; docs/api-guide.md "Sessions — choices"):
 * a façade over one use case per job — create (create-session.usecase.ts), event admission
 * (send-events.usecase.ts), update/archive/delete (session-control.usecase.ts) and reads
 * (session-queries.ts) — for the controllers, Deployments and the deployment activities.
 */
@Injectable()
export class SessionsService {
  private readonly creating: CreateSession;
  private readonly sending: SendEvents;
  private readonly control: SessionControl;
  private readonly queries: SessionQueries;

  constructor(
    @Inject(DataSource) dataSource: DataSource,
    @Inject(MangoMetrics) metrics: MangoMetrics,
    @Optional() @Inject(FILE_TEXT_READER) files?: FileTextReader,
    @Optional() @Inject(MODEL_PRICES) prices: PriceTable = {},
    @Optional()
    @Inject(SESSION_SERVICE_LIMITS)
    limits: SessionServiceLimits = DEFAULT_SESSION_SERVICE_LIMITS,
    @Optional() @Inject(SessionLog) log: SessionLog = new SessionLog(dataSource),
    @Optional()
    @Inject(SessionThreadRepository)
    threads: SessionThreadRepository = new SessionThreadRepository(dataSource),
  ) {
    const turns = new TurnAdmission(limits.runningSessionsPerWorkspace ?? null, metrics);
    this.creating = new CreateSession(dataSource, log, threads, limits, prices, files, turns);
    this.sending = new SendEvents(dataSource, log, metrics, limits, files, undefined, turns);
    this.control = new SessionControl(dataSource, log);
    this.queries = new SessionQueries(dataSource);
  }

  /**
   * `options` are for Deployment runs: the Session records its Deployment, and `withinTransaction` runs in
   * the creating transaction after the Session's rows are written (the run record), so both commit or neither.
   */
  create(
    workspaceId: string,
    body: unknown,
    options: {
      deploymentId?: string;
      withinTransaction?: (tx: EntityManager, session: SessionEntity) => Promise<void>;
    } = {},
  ): Promise<SessionView> {
    return this.creating.execute(workspaceId, body, options);
  }

  get(p: Principal, id: string): Promise<SessionView> {
    return this.queries.get(p, id);
  }

  list(workspaceId: string, query: Query): Promise<Page<SessionView> & { prev_page: string | null }> {
    return this.queries.list(workspaceId, query);
  }

  update(workspaceId: string, id: string, body: unknown): Promise<SessionView> {
    return this.control.update(workspaceId, id, body);
  }

  archive(workspaceId: string, id: string): Promise<SessionView> {
    return this.control.archive(workspaceId, id);
  }

  delete(workspaceId: string, id: string): Promise<{ id: string; type: 'session_deleted' }> {
    return this.control.delete(workspaceId, id);
  }

  /**
   * Appends client events. A Workspace key sends messages and interrupts; the Session's own Work token
   * sends only `user.tool_result`, checked against its live lease in the same transaction.
   */
  sendEvents(p: Principal, id: string, body: unknown): Promise<{ data: EventView[] }> {
    return this.sending.execute(p, id, body);
  }

  listEvents(
    p: Principal,
    id: string,
    query: Query,
    thread?: { id: string; filter: EventFilter },
  ): Promise<Page<EventView>> {
    return this.queries.listEvents(p, id, query, thread);
  }

  /** A Work token reads and writes only its own Session; anything else is invisible (404). */
  sessionIdFor(p: Principal, id: string): string {
    return sessionIdFor(p, id);
  }
}
