import {
  assertMigrationsApplied,
  createDataSource,
  migrate,
  MIGRATIONS,
  pendingMigrations,
  SCHEMA_LEVEL,
} from '@mango/persistence';
import { freePort, logged, startApp } from './app-process';
import { freshBucketEnv } from './files-app';
import { createEmptyDatabase, TestDatabase } from './test-database';

const ALL = MIGRATIONS.map((m) => m.name);

/**
 * Normal process start only checks the migration ledger (`mango migrate` applies migrations): each app
 * with a database refuses to start on an unmigrated one, naming what is pending and the command to run.
 */
describe('apps refuse to start while migrations are pending (real PostgreSQL, real processes)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createEmptyDatabase('pending');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('the ledger check lists every migration on an empty database and writes nothing', async () => {
    const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      expect(await pendingMigrations(ds)).toEqual(ALL);
      // Reading the ledger did not create it (start-up never writes the schema).
      expect(await ds.query("SELECT to_regclass('mango_migrations') AS t")).toEqual([{ t: null }]);
    } finally {
      await ds.destroy();
    }
    await expect(assertMigrationsApplied({ url: db.url })).rejects.toThrow(
      `the database has ${ALL.length} pending migrations (${ALL.join(', ')}): run \`mango migrate\``,
    );
  });

  const apps: Array<[string, string, () => Promise<Record<string, string>>]> = [
    ['api', 'apps/api/src/main.ts', async () => ({ MANGO_API_PORT: String(await freePort()) })],
    [
      'files',
      'apps/files/src/main.ts',
      async () => ({ MANGO_FILES_PORT: String(await freePort()), ...freshBucketEnv('pending') }),
    ],
    [
      'orchestrator',
      'apps/orchestrator/src/main.ts',
      async () => ({
        MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
        MANGO_TASK_QUEUE: `pending-${Date.now()}`,
      }),
    ],
  ];

  it.each(apps)(
    '%s exits 1 with the pending migrations and `mango migrate` in its log',
    async (_name, entry, env) => {
      const started = startApp(
        entry,
        { MANGO_DATABASE_URL: db.url, MANGO_LOG_LEVEL: 'info', ...(await env()) },
        logged('never logged: the app must not start'),
        90_000,
      );
      await expect(started).rejects.toThrow(/exited with 1 during start-up/);
      const output = String(await started.catch((e: Error) => e.message));
      expect(output).toContain('PendingMigrationsError');
      expect(output).toContain(ALL[0]);
      expect(output).toContain(ALL[ALL.length - 1]);
      expect(output).toContain('run `mango migrate`');
    },
    120_000,
  );

  it('after `migrate` the same check passes and an app starts', async () => {
    const ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    try {
      expect(await migrate(ds)).toEqual(ALL);
      expect(await pendingMigrations(ds)).toEqual([]);
    } finally {
      await ds.destroy();
    }
    await expect(assertMigrationsApplied({ url: db.url })).resolves.toEqual([]);
    const port = await freePort();
    const api = await startApp(
      'apps/api/src/main.ts',
      { MANGO_DATABASE_URL: db.url, MANGO_API_PORT: String(port), MANGO_LOG_LEVEL: 'info' },
      logged('api listening'),
      90_000,
    );
    expect(await api.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('an app refuses to start on a schema a newer release contracted past it (a rollback too far)', async () => {
    const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      await ds.query('UPDATE schema_compatibility SET min_code_level = $1', [SCHEMA_LEVEL + 1]);
      const started = startApp(
        'apps/api/src/main.ts',
        { MANGO_DATABASE_URL: db.url, MANGO_API_PORT: String(await freePort()), MANGO_LOG_LEVEL: 'info' },
        logged('never logged: the app must not start'),
        90_000,
      );
      await expect(started).rejects.toThrow(/exited with 1 during start-up/);
      const output = String(await started.catch((e: Error) => e.message));
      expect(output).toContain('SchemaTooNewError');
      expect(output).toContain(
        `needs level ${SCHEMA_LEVEL + 1} and this build understands level ${SCHEMA_LEVEL}`,
      );
    } finally {
      await ds.query('UPDATE schema_compatibility SET min_code_level = $1', [SCHEMA_LEVEL]);
      await ds.destroy();
    }
  }, 120_000);
});
