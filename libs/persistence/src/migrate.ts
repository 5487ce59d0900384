import { DataSource } from 'typeorm';

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

/** Names of migrations not yet applied (normal process start-up only checks, it does not migrate). */
export async function pendingMigrations(dataSource: DataSource): Promise<boolean> {
  return dataSource.showMigrations();
}

/**
 * The SQL that would bring the database in line with the entities. Empty when the migrations and the
 * entities agree: the drift check asserts exactly that.
 */
export async function schemaDrift(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((q) => q.query);
}
