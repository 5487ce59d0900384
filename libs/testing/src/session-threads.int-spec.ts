import {
  createDataSource,
  dataSourceOptions,
  migrate,
  MIGRATIONS,
  OUTBOX_CHANNEL,
  PgListener,
  primaryThreadId,
  SessionLog,
  SessionThreadEntity,
  SessionThreadRepository,
} from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { DataSource } from 'typeorm';
import { insertSessionRow, insertWorkspaceAndEnvironment } from './session-rows';
import { createEmptyDatabase, createTestDatabase, TestDatabase } from './test-database';

/**
 * The Thread repository over real PostgreSQL (ADR 0017): the primary Thread created with its Session,
 * Thread statuses written through the Thread status machine by the Session log's appends, Thread ids on
 * events, and the archive's durable intent (`archive_requested_at` + an outbox row, one transaction).
 */
describe('SessionThreadRepository (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let log: SessionLog;
  let threads: SessionThreadRepository;
  let owner: { workspaceId: string; environmentId: string };

  beforeAll(async () => {
    db = await createTestDatabase('threads');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    log = new SessionLog(ds);
    threads = new SessionThreadRepository(ds);
    owner = await insertWorkspaceAndEnvironment(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** A Session and its primary Thread in one transaction, as Session create writes them. */
  const newSession = () => insertSessionRow(ds, owner, { usage: { input_tokens: 0 } as never });

  const event = (type: string, extra: Record<string, unknown> = {}) => ({
    type,
    body: {},
    processed: true,
    runnable: false,
    ...extra,
  });
  const append = (id: string, batch: ReturnType<typeof event>[]) =>
    ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, batch, new Date()));
  const statusOf = async (threadId: string) =>
    (await ds.query('SELECT status FROM session_threads WHERE id = $1', [threadId]))[0]?.status;

  it('creates the primary Thread with its Session: the sthr_ id of the Session ULID, idle, no parent', async () => {
    const id = await newSession();
    const list = await threads.list(ds.manager, id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: 'sthr_' + id.slice('sesn_'.length),
      sessionId: id,
      parentThreadId: null,
      agentRef: null,
      status: 'idle',
      usage: { input_tokens: 0 },
      archiveRequestedAt: null,
      archivedAt: null,
    });
    expect(list[0]!.id).toBe(primaryThreadId(id));
    // One primary per Session.
    await expect(
      ds.transaction((tx) =>
        tx.insert(SessionThreadEntity, {
          id: newId('sessionThread'),
          sessionId: id,
          parentThreadId: null,
          agentRef: null,
          status: 'idle',
          createdAt: new Date(),
          updatedAt: new Date(),
        }),
      ),
    ).rejects.toThrow(/session_threads_primary_key/);
  });

  it("moves the primary's status with the Session's appends, and a child's only with its own events", async () => {
    const id = await newSession();
    const primary = primaryThreadId(id);
    const child = await ds.transaction((tx) => threads.createChild(tx, id, primary, '0', new Date()));
    await append(id, [event('user.message', { processed: false, runnable: true })]);
    expect([await statusOf(primary), await statusOf(child.id)]).toEqual(['running', 'idle']);
    // The child's input and lifecycle, carrying its id, move the child only.
    await append(id, [
      event('agent.thread_message_received', { sessionThreadId: child.id, runnable: true }),
      event('session.thread_status_running', { sessionThreadId: child.id }),
    ]);
    await append(id, [event('session.status_idle')]);
    expect([await statusOf(primary), await statusOf(child.id)]).toEqual(['idle', 'running']);
    const rows = await ds.query(
      'SELECT type, session_thread_id FROM session_events WHERE session_id = $1 ORDER BY seq',
      [id],
    );
    expect(rows).toEqual([
      { type: 'user.message', session_thread_id: null },
      { type: 'agent.thread_message_received', session_thread_id: child.id },
      { type: 'session.thread_status_running', session_thread_id: child.id },
      { type: 'session.status_idle', session_thread_id: null },
    ]);
    await append(id, [event('session.thread_status_idle', { sessionThreadId: child.id })]);
    expect(await statusOf(child.id)).toBe('idle');
    // A Fail terminates every Thread.
    await ds.transaction((tx) => log.terminate(tx, id, 'bad input', new Date()));
    expect([await statusOf(primary), await statusOf(child.id)]).toEqual(['terminated', 'terminated']);
  });

  it("lists the primary first, then children in creation order; usage saves reach the primary's row", async () => {
    const id = await newSession();
    const primary = primaryThreadId(id);
    const a = await ds.transaction((tx) => threads.createChild(tx, id, primary, '0', new Date()));
    const b = await ds.transaction((tx) => threads.createChild(tx, id, primary, 'advisor', new Date()));
    expect((await threads.list(ds.manager, id)).map((t) => t.id)).toEqual([primary, a.id, b.id]);
    expect((await threads.list(ds.manager, id, { limit: 2 })).map((t) => t.id)).toEqual([primary, a.id]);
    expect((await threads.list(ds.manager, id, { limit: 2, afterId: a.id })).map((t) => t.id)).toEqual([
      b.id,
    ]);
    expect((await threads.get(ds.manager, id, b.id))?.agentRef).toBe('advisor');
    expect(await threads.get(ds.manager, await newSession(), b.id)).toBeNull();
    await ds.transaction(async (tx) => log.saveUsage(tx, (await log.lock(tx, id))!, { input_tokens: 7 }));
    expect((await threads.get(ds.manager, id, primary))?.usage).toEqual({ input_tokens: 7 });
    expect((await threads.get(ds.manager, id, a.id))?.usage).toBeNull();
  });

  it('archive: the intent and its outbox row in one transaction; primary, running and repeated requests write nothing', async () => {
    const id = await newSession();
    const primary = primaryThreadId(id);
    const child = await ds.transaction((tx) => threads.createChild(tx, id, primary, '0', new Date()));
    const outbox = () =>
      ds.query('SELECT kind, session_thread_id, event_seq FROM outbox WHERE session_id = $1 ORDER BY id', [
        id,
      ]);
    await append(id, [event('span.model_request_start')]);

    expect((await threads.requestArchive(id, primary, new Date())).decision).toBe('primary');
    await append(id, [event('session.thread_status_running', { sessionThreadId: child.id })]);
    expect((await threads.requestArchive(id, child.id, new Date())).decision).toBe('running');
    expect(await outbox()).toEqual([]);
    expect((await threads.get(ds.manager, id, child.id))?.archiveRequestedAt).toBeNull();

    await append(id, [event('session.thread_status_idle', { sessionThreadId: child.id })]);
    const notices: string[] = [];
    const listener = new PgListener({
      url: db.url,
      channel: OUTBOX_CHANNEL,
      applicationName: 'mango-threads-test',
      onNotify: (p) => notices.push(p),
      onLost: () => undefined,
      onReconnected: () => undefined,
    });
    await listener.start();
    try {
      const at = new Date();
      const first = await threads.requestArchive(id, child.id, at);
      expect(first.decision).toBe('request');
      expect(first.thread?.archiveRequestedAt).toEqual(at);
      const deadline = Date.now() + 5000;
      while (notices.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(notices).toEqual([id]);
    } finally {
      await listener.close();
    }
    expect(await outbox()).toEqual([
      { kind: 'session.thread_archive_requested', session_thread_id: child.id, event_seq: '3' },
    ]);
    // Idempotent: asked again, nothing more is written.
    expect((await threads.requestArchive(id, child.id, new Date())).decision).toBe('already');
    expect(await outbox()).toHaveLength(1);
    expect(await threads.requestArchive(id, newId('sessionThread'), new Date())).toEqual({
      decision: 'not_found',
    });

    // The intent outlives its requester: the sweeper finds it and finishes it once.
    expect(await threads.pendingArchives(1000)).toContainEqual({ sessionId: id, threadId: child.id });
    expect(await ds.transaction((tx) => threads.finishArchive(tx, child.id, new Date()))).toBe(true);
    expect(await ds.transaction((tx) => threads.finishArchive(tx, child.id, new Date()))).toBe(false);
    expect(await threads.pendingArchives(1000)).not.toContainEqual({ sessionId: id, threadId: child.id });
    expect((await threads.get(ds.manager, id, child.id))?.archivedAt).toBeInstanceOf(Date);
    // A Thread whose archive was never requested is not finished.
    expect(await ds.transaction((tx) => threads.finishArchive(tx, primary, new Date()))).toBe(false);
  });

  it('an archive request waits for an append holding the Session row, then decides on the status it wrote', async () => {
    const id = await newSession();
    const primary = primaryThreadId(id);
    const child = await ds.transaction((tx) => threads.createChild(tx, id, primary, '0', new Date()));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const appending = ds.transaction(async (tx) => {
      const s = (await log.lock(tx, id))!;
      await log.append(
        tx,
        s,
        [event('agent.thread_message_received', { sessionThreadId: child.id, runnable: true })],
        new Date(),
      );
      locked();
      await held;
    });
    await isLocked;
    const archiving = threads.requestArchive(id, child.id, new Date());
    await new Promise((r) => setTimeout(r, 200));
    release();
    await appending;
    expect((await archiving).decision).toBe('running');
  });
});

describe('the session_threads migration (real PostgreSQL)', () => {
  it('backfills the primary Thread of every existing Session under the id the routes served', async () => {
    const db = await createEmptyDatabase('threadsmig');
    const before = new DataSource({
      ...dataSourceOptions({ url: db.url, poolSize: 2 }),
      migrations: MIGRATIONS.filter((m) => m.name !== 'CreateSessionThreads1796160000000'),
    });
    const after = createDataSource({ url: db.url, poolSize: 2 });
    try {
      await before.initialize();
      await migrate(before);
      const { workspaceId: ws, environmentId: env } = await insertWorkspaceAndEnvironment(before);
      const [idle, archived] = [newId('session'), newId('session')];
      for (const [id, status, archivedAt] of [
        [idle, 'running', null],
        [archived, 'idle', '2026-11-30T00:00:00.000Z'],
      ] as const)
        await before.query(
          `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                                 usage, last_seq, created_at, updated_at, archived_at)
           VALUES ($1, $2, $3, 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB', 1, '{}', $4, '{}', '{"input_tokens": 3}', 0,
                   '2026-11-29T00:00:00Z', '2026-11-29T01:00:00Z', $5)`,
          [id, ws, env, status, archivedAt],
        );
      await before.destroy();
      await after.initialize();
      expect(await migrate(after)).toEqual(['CreateSessionThreads1796160000000']);
      const rows = await after.query(
        `SELECT id, session_id, parent_thread_id, agent_ref, status, usage, archived_at, created_at, updated_at
           FROM session_threads ORDER BY session_id`,
      );
      expect(rows).toEqual(
        [
          [idle, 'running', null],
          [archived, 'idle', new Date('2026-11-30T00:00:00Z')],
        ]
          .sort((x, y) => String(x[0]).localeCompare(String(y[0])))
          .map(([id, status, archivedAt]) => ({
            id: primaryThreadId(id as string),
            session_id: id,
            parent_thread_id: null,
            agent_ref: null,
            status,
            usage: { input_tokens: 3 },
            archived_at: archivedAt,
            created_at: new Date('2026-11-29T00:00:00Z'),
            updated_at: new Date('2026-11-29T01:00:00Z'),
          })),
      );
      const cols = await after.query(
        `SELECT table_name FROM information_schema.columns WHERE column_name = 'session_thread_id' ORDER BY 1`,
      );
      expect(cols.map((c: { table_name: string }) => c.table_name)).toEqual(['outbox', 'session_events']);
    } finally {
      if (before.isInitialized) await before.destroy();
      if (after.isInitialized) await after.destroy();
      await db.drop();
    }
  });
});
