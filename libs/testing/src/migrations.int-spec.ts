import { createDataSource, migrate, MIGRATIONS, schemaDrift } from '@mango/persistence';
import { createEmptyDatabase, createTestDatabase } from './test-database';

describe('migrations (real PostgreSQL)', () => {
  it('produce exactly the schema the entities describe (generating a migration would produce nothing)', async () => {
    const db = await createTestDatabase('drift');
    const ds = createDataSource({ url: db.url, poolSize: 2 });
    await ds.initialize();
    try {
      expect(await schemaDrift(ds)).toEqual([]);
    } finally {
      await ds.destroy();
      await db.drop();
    }
  });

  it('apply once under concurrent runners, hold an advisory lock, and leave wrkspc_default', async () => {
    const db = await createEmptyDatabase('concurrent');
    const sources = [1, 2, 3].map(() => createDataSource({ url: db.url, poolSize: 2 }));
    try {
      await Promise.all(sources.map((s) => s.initialize()));
      const results = await Promise.all(sources.map((s) => migrate(s)));
      expect(results.flat()).toHaveLength(MIGRATIONS.length);
      const rows = await sources[0]!.query('SELECT count(*)::int AS n FROM mango_migrations');
      expect(rows[0].n).toBe(MIGRATIONS.length);
      const ws = await sources[0]!.query("SELECT id FROM workspaces WHERE id = 'wrkspc_default'");
      expect(ws).toHaveLength(1);
      expect(await migrate(sources[0]!)).toEqual([]);
    } finally {
      await Promise.all(sources.map((s) => (s.isInitialized ? s.destroy() : undefined)));
      await db.drop();
    }
  });
});
