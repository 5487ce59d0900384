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
 * The schema level this build reads and writes. A contract migration (one that drops or renames something
 * the previous release reads) raises this constant and, in its `up`, `schema_compatibility.min_code_level`
 * to the same number; expand migrations change neither (docs/operations.md, "Schema changes").
 */
export const SCHEMA_LEVEL = 1;

/** What `mango migrate status` shows and what every process checks before it serves. */
export interface SchemaStatus {
  /** Migrations in the database's ledger, oldest first, and whether this build knows them. */
  applied: Array<{ name: string; known: boolean }>;
  /** Migrations this build knows that the ledger does not list, oldest first. */
  pending: string[];
  /** Applied migrations this build does not know: a newer release migrated the database. */
  unknown: string[];
  /** The lowest schema level a build must have to run here (null before the table exists). */
  requiredLevel: number | null;
  /** This build's {@link SCHEMA_LEVEL}. */
  codeLevel: number;
}

/**
 * Reads the migration ledger and the compatibility row. Only reads (a missing ledger table means nothing
 * was applied), so every process can ask at start-up; applying is `mango migrate`'s job.
 */
export async function schemaStatus(dataSource: DataSource): Promise<SchemaStatus> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const [present] = (await dataSource.query(
    'SELECT to_regclass($1) IS NOT NULL AS ledger, to_regclass($2) IS NOT NULL AS compatibility',
    [table, 'schema_compatibility'],
  )) as Array<{ ledger: boolean; compatibility: boolean }>;
  const ledger = present?.ledger
    ? (
        (await dataSource.query(`SELECT name FROM "${table}" ORDER BY "timestamp", id`)) as Array<{
          name: string;
        }>
      ).map((r) => r.name)
    : [];
  const [row] = present?.compatibility
    ? ((await dataSource.query('SELECT min_code_level FROM schema_compatibility')) as Array<{
        min_code_level: number;
      }>)
    : [];
  const known = dataSource.migrations.map((m) => m.name ?? m.constructor.name);
  const knownSet = new Set(known);
  const appliedSet = new Set(ledger);
  return {
    applied: ledger.map((name) => ({ name, known: knownSet.has(name) })),
    pending: known.filter((name) => !appliedSet.has(name)),
    unknown: ledger.filter((name) => !knownSet.has(name)),
    requiredLevel: row ? Number(row.min_code_level) : null,
    codeLevel: SCHEMA_LEVEL,
  };
}

/** Names of the migrations this build knows that the database's ledger does not list, oldest first. */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  return (await schemaStatus(dataSource)).pending;
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
 * Why a process refuses to start: a newer release contracted the schema (dropped or renamed what this build
 * reads), so this build would fail on its queries. Rolling back past a contract needs the backup taken
 * before that upgrade.
 */
export class SchemaTooNewError extends Error {
  constructor(
    readonly requiredLevel: number,
    readonly codeLevel: number,
    readonly unknown: string[],
  ) {
    super(
      `the database schema needs level ${requiredLevel} and this build understands level ${codeLevel} ` +
        `(migrated by a newer release: ${unknown.join(', ') || 'no migration this build knows of'}): run a ` +
        'release whose schema level is at least that, or restore the backup taken before the upgrade ' +
        '(docs/operations.md, "Rollback")',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * The start-up decision on a {@link SchemaStatus}: refuses pending migrations and a schema contracted past
 * this build; returns the migrations a newer, still compatible release applied (the process may run: the
 * expand/contract rule keeps the previous release's reads valid), for the caller to log.
 */
export function checkSchema(status: SchemaStatus): { newerCompatible: string[] } {
  if (status.pending.length) throw new PendingMigrationsError(status.pending);
  if (status.requiredLevel !== null && status.requiredLevel > status.codeLevel)
    throw new SchemaTooNewError(status.requiredLevel, status.codeLevel, status.unknown);
  return { newerCompatible: status.unknown };
}

/**
 * The start-up check every app with a database runs before it serves: a short-lived connection reads the
 * ledger and {@link checkSchema} decides. It never migrates. Returns the migrations a newer compatible
 * release applied (empty normally), which the app logs.
 */
export async function assertMigrationsApplied(settings: DatabaseSettings): Promise<string[]> {
  const dataSource = createDataSource({ ...settings, poolSize: 1 });
  await dataSource.initialize();
  let status: SchemaStatus;
  try {
    status = await schemaStatus(dataSource);
  } finally {
    await dataSource.destroy();
  }
  return checkSchema(status).newerCompatible;
}

/**
 * The SQL that would bring the database in line with the entities. Empty when the migrations and the
 * entities agree: the drift check asserts exactly that.
 */
export async function schemaDrift(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((q) => q.query);
}
