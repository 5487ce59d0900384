import { pausedAtBudget, resumeStateFromLog } from '@mango/domain-sessions';
import { createDataSource, type NewSessionEvent, SessionEntity, SessionLog } from '@mango/persistence';
import type { DataSource } from 'typeorm';
import { insertSessionRow, insertWorkspaceAndEnvironment } from './session-rows';
import { createTestDatabase, TestDatabase } from './test-database';

/**
 * The Session log's reads that restate the domain's vocabulary in SQL (ADR 0005): the budget pause the
 * API refuses input at, and the trace a turn continues, over real PostgreSQL. Each answers what the
 * domain rule answers over the whole log.
 */
describe('SessionLog vocabulary reads (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let log: SessionLog;
  let owner: { workspaceId: string; environmentId: string };
  const budget = { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } };

  beforeAll(async () => {
    db = await createTestDatabase('sessionvocab');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    log = new SessionLog(ds);
    owner = await insertWorkspaceAndEnvironment(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const ev = (
    type: string,
    body: Record<string, unknown> = {},
    key?: string,
    thread?: string,
  ): NewSessionEvent => ({
    type,
    body,
    processed: true,
    runnable: false,
    ...(key ? { idempotencyKey: key } : {}),
    ...(thread ? { sessionThreadId: thread } : {}),
  });
  const running = (n: number) => ev('session.status_running', {}, `turn:${n}:running`);
  const idle = (n: number, reason: string) =>
    ev('session.status_idle', { stop_reason: { type: reason } }, `turn:${n}:idle`);

  async function append(id: string, events: NewSessionEvent[]): Promise<void> {
    await ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, events, new Date()));
  }

  /** The domain's answer over every event of the Session (no filter), with the projection's guards. */
  async function foldOfWholeLog(id: string): Promise<boolean> {
    const s = (await ds.getRepository(SessionEntity).findOneBy({ id }))!;
    if (s.status !== 'idle' || s.budget === null) return false;
    const rows: Array<{
      seq: string;
      type: string;
      key: string | null;
      stop: string | null;
      budget: boolean;
    }> = await ds.query(
      `SELECT seq, type, idempotency_key AS key, body->'stop_reason'->>'type' AS stop,
                (type = 'session.updated' AND body ? 'budget') AS budget
           FROM session_events WHERE session_id = $1 AND session_thread_id IS NULL ORDER BY seq`,
      [id],
    );
    return pausedAtBudget(
      resumeStateFromLog(
        rows.map((r) => ({
          seq: r.seq,
          type: r.type,
          idempotencyKey: r.key,
          stopReason: r.stop,
          budgetChanged: r.budget,
        })),
      ),
    );
  }

  async function paused(id: string): Promise<boolean> {
    const s = (await ds.getRepository(SessionEntity).findOneBy({ id }))!;
    return log.pausedAtBudget(ds.manager, s);
  }

  it('the budget pause answers as the fold of the whole log, at every point of a Session with budget pauses', async () => {
    const id = await insertSessionRow(ds, owner, { budget: budget as never });
    const steps: Array<[string, NewSessionEvent[], boolean]> = [
      ['a message, no turn yet', [ev('user.message', { content: [] })], false],
      ['a turn runs', [running(1), ev('agent.message', {}, 'turn:1:step:0:message')], false],
      ['it ends at the gate', [ev('session.usage', {}, 'turn:1:usage'), idle(1, 'budget_reached')], true],
      ['a title change does not lift it', [ev('session.updated', { title: 't' })], true],
      ['a budget change lifts it', [ev('session.updated', { budget })], false],
      ['the resumed turn runs', [running(2), ev('agent.message', {}, 'turn:2:step:0:message')], false],
      ['and pauses again', [idle(2, 'budget_reached')], true],
      [
        'a next turn that ends normally',
        [ev('session.updated', { budget }), running(3), idle(3, 'end_turn')],
        false,
      ],
    ];
    for (const [what, events, expected] of steps) {
      await append(id, events);
      expect({ what, paused: await paused(id) }).toEqual({ what, paused: expected });
      expect({ what, paused: await foldOfWholeLog(id) }).toEqual({ what, paused: expected });
    }
  });

  it('a Session without a budget, or that is not idle, is not paused', async () => {
    const free = await insertSessionRow(ds, owner);
    await append(free, [running(1), idle(1, 'budget_reached')]);
    expect(await paused(free)).toBe(false);
    const busy = await insertSessionRow(ds, owner, { budget: budget as never });
    await append(busy, [running(1), idle(1, 'budget_reached'), ev('user.message', { content: [] })]);
    await ds.query(`UPDATE sessions SET status = 'running' WHERE id = $1`, [busy]);
    expect(await paused(busy)).toBe(false);
  });

  it("the turn's trace: the latest user.message's, or the latest before a sequence", async () => {
    const id = await insertSessionRow(ds, owner);
    expect(await log.turnTraceparent(ds.manager, id)).toBeUndefined();
    await append(id, [ev('user.message', { content: [], _traceparent: '00-a-01' })]);
    await append(id, [ev('agent.message', { _traceparent: '00-x-01' })]);
    await append(id, [ev('user.message', { content: [], _traceparent: '00-b-01' })]);
    await append(id, [ev('user.message', { content: [] })]);
    // The latest message has none: the turn has none (an older message's trace is not borrowed).
    expect(await log.turnTraceparent(ds.manager, id)).toBeUndefined();
    expect(await log.turnTraceparent(ds.manager, id, '4')).toBe('00-b-01');
    expect(await log.turnTraceparent(ds.manager, id, '3')).toBe('00-a-01');
    expect(await log.turnTraceparent(ds.manager, id, '1')).toBeUndefined();
  });
});
