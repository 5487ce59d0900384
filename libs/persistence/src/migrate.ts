import { DataSource } from 'typeorm';
import { createDataSource, DatabaseSettings } from './data-source';

/** Arbitrary constant: the advisory lock every process takes before it changes the schema. */
export const MIGRATION_LOCK_KEY = 7_242_001;

/**
 * Runs pending migrations in one transaction while holding a PostgreSQL advisory lock, so concurrent
 * `mango migrate` runs (or several replicas) apply each migration exactly once.
 */
export async function migrate(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'all' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Names of the migrations this build knows that the database's ledger does not list, oldest first. Only
 * reads (a missing ledger table means nothing was applied), so every process can ask at start-up; applying
 * them is `mango migrate`'s job (`npm run up`, the Compose `migrate` service, the Helm migrate Job).
 */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const [ledger] = (await dataSource.query('SELECT to_regclass($1) IS NOT NULL AS present', [
    table,
  ])) as Array<{
    present: boolean;
  }>;
  const applied = new Set<string>(
    ledger?.present
      ? ((await dataSource.query(`SELECT name FROM "${table}"`)) as Array<{ name: string }>).map(
          (r) => r.name,
        )
      : [],
  );
  return dataSource.migrations.map((m) => m.name ?? m.constructor.name).filter((name) => !applied.has(name));
}

/** Why a process refuses to start: its database is behind the migrations it was built with. */
export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `the database has ${pending.length} pending migration${pending.length === 1 ? '' : 's'} ` +
        `(${pending.join(', ')}): run \`mango migrate\` (npx mango migrate; the Compose migrate service or ` +
        'the Helm migrate Job in a deployment) and start again',
    );
    this.name = 'PendingMigrationsError';
  }
}

/**
 * The start-up check every app with a database runs before it serves: a short-lived connection reads the
 * migration ledger and throws {@link PendingMigrationsError} naming what is missing. It never migrates.
 */
export async function assertMigrationsApplied(settings: DatabaseSettings): Promise<void> {
  const dataSource = createDataSource({ ...settings, poolSize: 1 });
  await dataSource.initialize();
  let pending: string[];
  try {
    pending = await pendingMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  if (pending.length) throw new PendingMigrationsError(pending);
}

/**
 * The SQL that would bring the database in line with the entities. Empty when the migrations and the
 * entities agree: the drift check asserts exactly that.
 */
export async function schemaDrift(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((q) => q.query);
}
