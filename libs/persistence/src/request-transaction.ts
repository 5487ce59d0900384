import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** The transaction a request runs in, while it is open. */
interface RequestTransaction {
  dataSource: DataSource;
  /** The real runner; `shared` is what every query of the request gets instead of a pooled one. */
  runner: QueryRunner;
  shared: QueryRunner;
  open: boolean;
}

const current = new AsyncLocalStorage<RequestTransaction>();
const joined = new WeakSet<DataSource>();

/**
 * Makes the statements of `dataSource` that run inside `runInRequestTransaction` (in its async context)
 * join that one transaction instead of taking a pooled connection each: `dataSource.transaction(...)`
 * becomes a SAVEPOINT inside it, `dataSource.query`, repositories, query builders and `runStatement` run
 * on its connection. Everything TypeORM does goes through `createQueryRunner`, so that is the one hook.
 * Outside a request transaction nothing changes. Idempotent per DataSource.
 */
export function joinRequestTransactions(dataSource: DataSource): void {
  if (joined.has(dataSource)) return;
  joined.add(dataSource);
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const tx = current.getStore();
    if (tx?.open && tx.dataSource === dataSource) return tx.shared;
    return create(mode);
  };
}

/**
 * Runs `fn` in one transaction on one connection, which every statement of `dataSource` made in its
 * async context joins (see joinRequestTransactions): all of them commit together when `fn` resolves, or
 * none when it throws. `fn` gets the transaction's own EntityManager too.
 */
export async function runInRequestTransaction<T>(
  dataSource: DataSource,
  fn: (tx: EntityManager) => Promise<T>,
): Promise<T> {
  // A fresh pooled runner, even when called inside another request transaction.
  const runner = current.exit(() => dataSource.createQueryRunner());
  const shared = new Proxy(runner, {
    get(target, prop) {
      // Callers release what createQueryRunner gave them; the request's connection is released here.
      if (prop === 'release') return releaseNothing;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const tx: RequestTransaction = { dataSource, runner, shared, open: true };
  try {
    await runner.connect();
    await runner.startTransaction();
    const out = await current.run(tx, () => fn(runner.manager));
    tx.open = false;
    await runner.commitTransaction();
    return out;
  } catch (err) {
    tx.open = false;
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw err;
  } finally {
    tx.open = false;
    await runner.release();
  }
}

/** The EntityManager of the request transaction `dataSource` runs in here, if any (for `runStatement`). */
export function requestTransactionManager(dataSource: DataSource): EntityManager | undefined {
  const tx = current.getStore();
  return tx?.open && tx.dataSource === dataSource ? tx.runner.manager : undefined;
}

const releaseNothing = async (): Promise<void> => undefined;
