import {
  createDataSource,
  IdempotencyKeys,
  joinRequestTransactions,
  runInRequestTransaction,
  runStatement,
} from '@mango/persistence';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The request transaction an Idempotency-Key request runs in (real PostgreSQL): every way a use case
 * writes — `dataSource.transaction`, `dataSource.query`, `runStatement` on the DataSource — joins it, so
 * the writes and the key commit together, or (an error, a crash) neither does.
 */
describe('request transaction (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let other: Client;
  const scope = { workspaceId: 'wrkspc_default', credentialKind: 'workspace', key: 'k' };
  const remembered = {
    requestDigest: 'd',
    requestMethod: 'POST',
    requestPath: '/v1/x',
    requestId: 'req_1',
    responseStatus: 201,
    responseBody: { id: 'x' },
  };
  const names = async () =>
    (
      await other.query<{ name: string }>('SELECT name FROM workspaces WHERE id LIKE $1 ORDER BY name', [
        'wrkspc_t%',
      ])
    ).rows.map((r) => r.name);
  const keys = async () =>
    Number((await other.query('SELECT count(*) AS n FROM idempotency_keys')).rows[0].n);

  beforeAll(async () => {
    db = await createTestDatabase('request-tx');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    joinRequestTransactions(ds);
    other = new Client({ connectionString: db.url });
    await other.connect();
  });
  afterAll(async () => {
    await other.end();
    await ds.destroy();
    await db.drop();
  });
  beforeEach(async () => {
    await other.query(`DELETE FROM workspaces WHERE id LIKE 'wrkspc_t%'`);
    await other.query('DELETE FROM idempotency_keys');
  });

  const write = (id: string) =>
    ds.transaction((tx) => tx.query('INSERT INTO workspaces (id, name) VALUES ($1, $1)', [id]));

  it('every kind of statement joins it: nothing is visible to others until it commits, then all is, with the key', async () => {
    let seenInside: string[] = ['not read'];
    await runInRequestTransaction(ds, async (tx) => {
      await write('wrkspc_t1');
      await ds.query('INSERT INTO workspaces (id, name) VALUES ($1, $1)', ['wrkspc_t2']);
      await runStatement(ds, 'idem_test_insert', 'INSERT INTO workspaces (id, name) VALUES ($1, $1)', [
        'wrkspc_t3',
      ]);
      await ds.manager.query('INSERT INTO workspaces (id, name) VALUES ($1, $1)', ['wrkspc_t4']);
      await IdempotencyKeys.remember(tx, scope, remembered, new Date(), new Date(Date.now() + 60_000));
      seenInside = await names();
    });
    expect(seenInside).toEqual([]);
    expect(await names()).toEqual(['wrkspc_t1', 'wrkspc_t2', 'wrkspc_t3', 'wrkspc_t4']);
    expect(await keys()).toBe(1);
  });

  it('an error after the writes rolls back the writes and the key together', async () => {
    await expect(
      runInRequestTransaction(ds, async (tx) => {
        await write('wrkspc_t5');
        await IdempotencyKeys.remember(tx, scope, remembered, new Date(), new Date(Date.now() + 60_000));
        throw new Error('after the write');
      }),
    ).rejects.toThrow('after the write');
    expect(await names()).toEqual([]);
    expect(await keys()).toBe(0);
  });

  it('a crash (its connection killed) between the write and the commit leaves neither the write nor the key', async () => {
    await expect(
      runInRequestTransaction(ds, async (tx) => {
        await write('wrkspc_t6');
        await IdempotencyKeys.remember(tx, scope, remembered, new Date(), new Date(Date.now() + 60_000));
        const [{ pid }] = await tx.query('SELECT pg_backend_pid() AS pid');
        await other.query('SELECT pg_terminate_backend($1)', [pid]);
      }),
    ).rejects.toThrow();
    expect(await names()).toEqual([]);
    expect(await keys()).toBe(0);
    // The pool recovers: the next request transaction commits.
    await runInRequestTransaction(ds, () => write('wrkspc_t7'));
    expect(await names()).toEqual(['wrkspc_t7']);
  });

  it("a second request with the key cannot take its lock while the first runs, and reads the first's row once it committed", async () => {
    let inside = false;
    await runInRequestTransaction(ds, async (tx) => {
      expect(await IdempotencyKeys.tryLock(tx, scope)).toBe(true);
      await IdempotencyKeys.remember(tx, scope, remembered, new Date(), new Date(Date.now() + 60_000));
      inside = await runInRequestTransaction(ds, (tx2) => IdempotencyKeys.tryLock(tx2, scope));
    });
    expect(inside).toBe(false);
    const after = await runInRequestTransaction(ds, async (tx) => {
      expect(await IdempotencyKeys.tryLock(tx, scope)).toBe(true);
      return IdempotencyKeys.find(tx, scope, new Date());
    });
    expect(after).toEqual(remembered);
  });

  it('statements outside a request transaction commit on their own, as before', async () => {
    await write('wrkspc_t8');
    expect(await names()).toEqual(['wrkspc_t8']);
  });

  it('prune deletes expired keys only; an expired key is not found and may be used again', async () => {
    const now = new Date();
    await runInRequestTransaction(ds, (tx) =>
      IdempotencyKeys.remember(
        tx,
        scope,
        remembered,
        new Date(now.getTime() - 120_000),
        new Date(now.getTime() - 60_000),
      ),
    );
    const live = { ...scope, key: 'live' };
    await runInRequestTransaction(ds, (tx) =>
      IdempotencyKeys.remember(tx, live, remembered, now, new Date(now.getTime() + 60_000)),
    );
    expect(await runInRequestTransaction(ds, (tx) => IdempotencyKeys.find(tx, scope, now))).toBeUndefined();
    expect(await IdempotencyKeys.prune(ds, now, 1000)).toBe(1);
    expect(await keys()).toBe(1);
  });
});
