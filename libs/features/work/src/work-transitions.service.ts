import { Inject, Injectable } from '@nestjs/common';
import { DomainError, notFound } from '@mango/domain-kernel';
import { ack, fail, heartbeat, recordResult, stop, WorkLease } from '@mango/domain-work-lease';
import type { Principal } from '@mango/feature-auth';
import {
  ackOne,
  continueSessionWork,
  dbNow,
  requireTokenAccess,
  toLease,
  WorkItemEntity,
  WorkItemRepository,
} from '@mango/persistence';
import { isId } from '@mango/platform-ids';
import { DataSource, EntityManager } from 'typeorm';
import { SESSION_TERMINATOR, SessionTerminator } from './session-terminator.port';
import { parseFailBody, parseHeartbeatQuery, parseResultBody, parseStopBody } from './work-input';
import { environmentPrincipal, workPrincipal, WorkPrincipal } from './work-principals';
import { WorkService } from './work.service';
import { renderWork, WorkView } from './work.view';

/**
 * The lease transitions after a claim: Ack (Environment key), Heartbeat, Result, Fail (Work token) and
 * Stop (either). Each is decided by the pure state machine in @mango/domain-work-lease on a row locked
 * FOR UPDATE, with PostgreSQL's clock, and persisted by the Work item repository.
 */
@Injectable()
export class WorkTransitionsService {
  private readonly items = new WorkItemRepository();

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly work: WorkService,
    @Inject(SESSION_TERMINATOR) private readonly sessions: SessionTerminator,
  ) {}

  /** Ack: `queued` (claimed) → `starting`; repeating it after success is idempotent. */
  async ack(p: Principal, environmentId: string, workId: string): Promise<WorkView> {
    const env = environmentPrincipal(p, environmentId);
    // The common case in one statement (`ackOne`: key FOR SHARE + the state machine's Ack transition).
    const acked = await ackOne(this.dataSource, { keyId: env.keyId, environmentId, workId });
    if (acked) return renderWork(acked);
    // Repeats, refusals and overdue items: the state machine on the locked row.
    // The key is held first and its check supplies the transaction's clock (one round trip fewer).
    return this.withItem(
      environmentId,
      workId,
      async (_tx, row, lease, now) => {
        const { next } = ack(lease, now);
        return { next, view: () => renderWork(row) };
      },
      (tx) => this.items.holdKey(tx, env.keyId),
    );
  }

  async heartbeat(p: Principal, environmentId: string, workId: string, query: Record<string, unknown>) {
    const input = parseHeartbeatQuery(query);
    const token = workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      checkToken(row, token, lease, now, null);
      const { next, response } = heartbeat(lease, input, now);
      return { next, view: () => ({ type: 'work_heartbeat' as const, ...response }) };
    });
  }

  async result(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const input = parseResultBody(body);
    const token = workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      checkToken(row, token, lease, now, 'result');
      const { next } = recordResult(lease, input, now);
      return { next, view: () => renderWork(row) };
    });
  }

  async fail(p: Principal, environmentId: string, workId: string, body: unknown): Promise<WorkView> {
    const message = parseFailBody(body);
    const token = workPrincipal(p, environmentId, workId);
    return this.withItem(environmentId, workId, async (tx, row, lease, now) => {
      checkToken(row, token, lease, now, 'fail');
      const { next } = fail(lease, message, now);
      if (row.sessionId) await this.sessions.terminate(tx, row.sessionId, message, now);
      return { next, view: () => renderWork(row) };
    });
  }

  /** Stop: Workspace key (operator authority) or the Work's own live token; 204 either way. */
  async stop(p: Principal, environmentId: string, workId: string, body: unknown): Promise<void> {
    const input = parseStopBody(body);
    if (p.kind === 'work') workPrincipal(p, environmentId, workId);
    else await this.dataSource.transaction((tx) => this.work.environment(tx, p, environmentId));
    await this.withItem(environmentId, workId, async (_tx, row, lease, now) => {
      if (p.kind === 'work') checkToken(row, p, lease, now, 'stop');
      const { next } = stop(lease, input, now);
      return { next, view: () => undefined };
    });
  }

  /**
   * Runs one transition on a row locked FOR UPDATE. Lazy deadline reconciliation is committed even
   * when the transition itself is refused, so a refused request still leaves the truthful state. A
   * running Session whose item just stopped gets its next item in the same transaction.
   */
  private async withItem<T>(
    environmentId: string,
    workId: string,
    transition: (
      tx: EntityManager,
      row: WorkItemEntity,
      lease: WorkLease,
      now: Date,
    ) => Promise<{ next: WorkLease; view: () => T }>,
    /** Runs first in the transaction and returns PostgreSQL's clock (e.g. holding the Environment key). */
    first?: (tx: EntityManager) => Promise<Date>,
  ): Promise<T> {
    let refusal: unknown;
    const out = await this.dataSource.transaction(async (tx) => {
      const clock = first ? await first(tx) : undefined;
      if (!isId('work', workId)) throw notFound('work', workId);
      const now = clock ?? (await dbNow(tx));
      const row = await this.items.lockItem(tx, environmentId, workId, now);
      if (!row) throw notFound('work', workId);
      try {
        const before = row.state;
        const { next, view } = await transition(tx, row, toLease(row), now);
        await this.items.saveLease(tx, row, next);
        if (row.sessionId && before !== 'stopped' && row.state === 'stopped')
          await continueSessionWork(tx, row.sessionId, now);
        return view();
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        refusal = e;
        return undefined;
      }
    });
    if (refusal) throw refusal;
    return out as T;
  }
}

/**
 * The token must be the item's current one (a reclaim rotates the digest, so an old owner is 401), then
 * — for `operation` — a dead token is refused (401) before any input rule is looked at, whatever the route.
 */
function checkToken(
  row: WorkItemEntity,
  p: WorkPrincipal,
  lease: WorkLease,
  now: Date,
  operation: 'result' | 'fail' | 'stop' | null,
): void {
  requireTokenAccess(
    row,
    p.tokenDigest,
    lease,
    now,
    operation,
    'the Work token is no longer valid (the Work was reclaimed)',
  );
}
