import {
  createDataSource,
  entitySelectList,
  OUTBOX_CHANNEL,
  PgListener,
  pruneDispatchedOutbox,
  runStatement,
  SessionEntity,
  SessionLog,
} from '@mango/persistence';
import type { DataSource } from 'typeorm';
import { insertSessionRow, insertWorkspaceAndEnvironment } from './session-rows';
import { createTestDatabase, TestDatabase } from './test-database';

/**
 * The Session log repository over real PostgreSQL (ADR 0005, ADR 0007): gapless sequences, the status
 * projection, outbox rows only for kinds that wake the workflow, and pruning that keeps the outbox bounded.
 */
describe('SessionLog (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let log: SessionLog;
  let owner: { workspaceId: string; environmentId: string };

  beforeAll(async () => {
    db = await createTestDatabase('sessionlog');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    log = new SessionLog(ds);
    owner = await insertWorkspaceAndEnvironment(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const newSession = () => insertSessionRow(ds, owner);

  const event = (type: string, extra: Record<string, unknown> = {}) => ({
    type,
    body: {},
    processed: true,
    runnable: false,
    ...extra,
  });

  /** One text turn and one tool round trip, as the API and the orchestrator append them. */
  const TURN = [
    [event('user.message', { processed: false, runnable: true })],
    [event('session.status_running')],
    [event('span.model_request_start')],
    [event('agent.tool_use', { runnable: true }), event('span.model_request_end')],
    [event('user.tool_result', { toolUseId: 'sevt_x' })],
    [event('span.model_request_start', { idempotencyKey: 'k2' })],
    [event('agent.message'), event('span.model_request_end')],
    [event('session.updated', { outboxKind: 'session.budget_changed' })],
    [event('session.status_idle')],
  ];

  it('appends gapless sequences, projects the status and writes outbox rows only for waking kinds', async () => {
    const id = await newSession();
    const statuses: string[] = [];
    for (const batch of TURN)
      await ds.transaction(async (tx) => {
        const s = (await log.lock(tx, id))!;
        await log.append(tx, s, batch, new Date());
        statuses.push(s.status);
      });
    expect(statuses).toEqual([
      'running',
      'running',
      'running',
      'running',
      'running',
      'running',
      'running',
      'running',
      'idle',
    ]);
    const seqs = await ds.query('SELECT seq FROM session_events WHERE session_id = $1 ORDER BY seq', [id]);
    expect(seqs.map((r: { seq: string }) => Number(r.seq))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const outbox = await ds.query('SELECT event_seq, kind FROM outbox WHERE session_id = $1 ORDER BY id', [
      id,
    ]);
    expect(outbox).toEqual([
      { event_seq: '1', kind: 'user.message' },
      { event_seq: '6', kind: 'user.tool_result' },
      { event_seq: '10', kind: 'session.budget_changed' },
    ]);
    const [row] = await ds.query('SELECT status, last_seq FROM sessions WHERE id = $1', [id]);
    expect(row).toEqual({ status: 'idle', last_seq: '11' });
    // An idempotent retry appends nothing and moves nothing.
    await ds.transaction(async (tx) => {
      const s = (await log.lock(tx, id))!;
      expect(
        await log.append(tx, s, [event('span.model_request_start', { idempotencyKey: 'k2' })], new Date()),
      ).toEqual([]);
    });
    expect((await ds.query('SELECT last_seq FROM sessions WHERE id = $1', [id]))[0].last_seq).toBe('11');
  });

  it('wakes the relay only for appends that wrote outbox rows', async () => {
    const id = await newSession();
    const notices: string[] = [];
    const listener = new PgListener({
      url: db.url,
      channel: OUTBOX_CHANNEL,
      applicationName: 'mango-session-log-test',
      onNotify: (p) => notices.push(p),
      onLost: () => undefined,
      onReconnected: () => undefined,
    });
    await listener.start();
    try {
      const append = (batch: ReturnType<typeof event>[]) =>
        ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, batch, new Date()));
      await append([event('session.status_running'), event('span.model_request_start')]);
      await append([event('user.interrupt')]);
      await append([event('agent.message')]);
      const deadline = Date.now() + 5000;
      while (notices.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 200));
      expect(notices).toEqual([id]);
    } finally {
      await listener.close();
    }
  });

  it('terminate ends the Session once (error, status_terminated), and nothing moves it afterwards', async () => {
    const id = await newSession();
    await ds.transaction((tx) => log.terminate(tx, id, 'bad input', new Date()));
    await ds.transaction((tx) => log.terminate(tx, id, 'again', new Date()));
    const types = await ds.query('SELECT type FROM session_events WHERE session_id = $1 ORDER BY seq', [id]);
    expect(types.map((t: { type: string }) => t.type)).toEqual([
      'session.error',
      'session.status_terminated',
    ]);
    expect((await ds.query('SELECT status FROM sessions WHERE id = $1', [id]))[0].status).toBe('terminated');
    expect(await log.withOpenSession(id, async () => 'ran')).toBeUndefined();
  });

  it('pruning deletes only dispatched rows past their retention, in bounded batches', async () => {
    const id = await newSession();
    await ds.query('DELETE FROM outbox');
    // 25 old dispatched rows, 5 recent dispatched rows, 5 undispatched rows.
    await ds.query(
      `INSERT INTO outbox (session_id, event_seq, kind, created_at, dispatched_at)
       SELECT $1, g, 'user.message', now() - interval '1 hour',
              CASE WHEN g <= 25 THEN now() - interval '30 minutes' WHEN g <= 30 THEN now() ELSE NULL END
         FROM generate_series(1, 35) AS g`,
      [id],
    );
    expect(await pruneDispatchedOutbox(ds, { batch: 10 })).toBe(10);
    expect(await pruneDispatchedOutbox(ds, { batch: 10 })).toBe(10);
    expect(await pruneDispatchedOutbox(ds, { batch: 10 })).toBe(5);
    expect(await pruneDispatchedOutbox(ds, { batch: 10 })).toBe(0);
    const left = await ds.query(
      `SELECT count(*) FILTER (WHERE dispatched_at IS NULL)::int AS pending, count(*)::int AS total FROM outbox`,
    );
    expect(left).toEqual([{ pending: 5, total: 10 }]);
    // With a zero retention the recent dispatched rows go too; pending rows never do.
    expect(await pruneDispatchedOutbox(ds, { retentionMs: 0 })).toBe(5);
    expect((await ds.query('SELECT count(*)::int AS n FROM outbox'))[0].n).toBe(5);
  });

  it("appends with statements prepared on the transaction's own connection: they roll back with it", async () => {
    const id = await newSession();
    const prepared = await ds.transaction(async (tx) => {
      await log.append(tx, (await log.lock(tx, id))!, [event('user.interrupt')], new Date());
      const rows: Array<{ name: string }> = await tx.query('SELECT name FROM pg_prepared_statements');
      return rows.map((r) => r.name);
    });
    expect(prepared).toContain('mango_session_append');
    await expect(
      ds.transaction(async (tx) => {
        await log.append(tx, (await log.lock(tx, id))!, [event('user.interrupt')], new Date());
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const rows = await ds.query('SELECT seq FROM session_events WHERE session_id = $1', [id]);
    expect(rows.map((r: { seq: string }) => r.seq)).toEqual(['1']);
    expect((await ds.query('SELECT last_seq FROM sessions WHERE id = $1', [id]))[0].last_seq).toBe('1');
  });

  it('entitySelectList reads a Session row as TypeORM reads the entity (every column, the same types)', async () => {
    const id = await newSession();
    await ds.query(`UPDATE sessions SET budget = '{"type":"limit"}', archived_at = now() WHERE id = $1`, [
      id,
    ]);
    const [raw] = await runStatement<SessionEntity>(
      ds,
      'test_session_select_list',
      `SELECT ${entitySelectList(ds.manager, SessionEntity)} FROM sessions WHERE id = $1`,
      [id],
    );
    const orm = await ds.manager.findOneByOrFail(SessionEntity, { id });
    expect({ ...raw }).toEqual({ ...orm });
    expect(raw!.archivedAt).toBeInstanceOf(Date);
    expect(typeof raw!.lastSeq).toBe('string');
  });
});
