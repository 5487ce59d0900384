import { createDataSource, OutboxRepository, type OutboxRow, SessionLog } from '@mango/persistence';
import type { DataSource } from 'typeorm';
import { insertSessionRow, insertWorkspaceAndEnvironment } from './session-rows';
import { createTestDatabase, TestDatabase } from './test-database';

/**
 * The outbox relay's repository (ADR 0007) over real PostgreSQL: a batch is claimed in id order, handed
 * off in the claiming transaction and marked dispatched there; a failed hand-off leaves it pending (at
 * least once); a batch another relay holds is skipped, not waited for.
 */
describe('OutboxRepository (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let log: SessionLog;
  let outbox: OutboxRepository;
  let owner: { workspaceId: string; environmentId: string };

  beforeAll(async () => {
    db = await createTestDatabase('outboxrepo');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    log = new SessionLog(ds);
    outbox = new OutboxRepository(ds);
    owner = await insertWorkspaceAndEnvironment(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** A Session with one user.message (a kind that wakes the workflow: one outbox row). */
  async function messaged(traceparent?: string): Promise<string> {
    const id = await insertSessionRow(ds, owner);
    await ds.transaction(async (tx) =>
      log.append(
        tx,
        (await log.lock(tx, id))!,
        [
          {
            type: 'user.message',
            body: { content: [], ...(traceparent ? { _traceparent: traceparent } : {}) },
            processed: false,
            runnable: false,
          },
        ],
        new Date(),
      ),
    );
    return id;
  }

  it('dispatches pending rows in id order, a batch at a time, with what the signal needs', async () => {
    const sessions = [await messaged('00-t-01'), await messaged(), await messaged()];
    expect((await outbox.backlog()).n).toBe(3);
    const seen: OutboxRow[][] = [];
    const first = await outbox.dispatchBatch(2, async (_tx, rows) => void seen.push(rows));
    expect(first.map((r) => r.session_id)).toEqual(sessions.slice(0, 2));
    expect(first[0]).toMatchObject({
      event_seq: '1',
      kind: 'user.message',
      traceparent: '00-t-01',
      tool_use_id: null,
    });
    expect(seen).toEqual([first]);
    expect((await outbox.backlog()).n).toBe(1);
    const second = await outbox.dispatchBatch(2, async () => undefined);
    expect(second.map((r) => r.session_id)).toEqual([sessions[2]]);
    expect(await outbox.backlog()).toEqual({ n: 0, age: null });
    expect(await outbox.dispatchBatch(2, async () => undefined)).toEqual([]);
  });

  it('a hand-off that fails leaves the rows pending for the next pass', async () => {
    await messaged();
    await expect(
      outbox.dispatchBatch(10, async () => {
        throw new Error('Temporal is down');
      }),
    ).rejects.toThrow('Temporal is down');
    expect((await outbox.backlog()).n).toBe(1);
    expect(await outbox.dispatchBatch(10, async () => undefined)).toHaveLength(1);
    expect((await outbox.backlog()).n).toBe(0);
  });

  it('a batch another relay holds is skipped, not waited for', async () => {
    await messaged();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const isClaimed = new Promise<void>((r) => (claimed = r));
    const holder = outbox.dispatchBatch(10, async () => {
      claimed();
      await held;
    });
    await isClaimed;
    expect(await outbox.dispatchBatch(10, async () => undefined)).toEqual([]);
    release();
    expect(await holder).toHaveLength(1);
    expect((await outbox.backlog()).n).toBe(0);
  });
});
