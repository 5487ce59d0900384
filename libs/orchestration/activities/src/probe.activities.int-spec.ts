import { createDataSource } from '@mango/persistence';
import { createTestDatabase } from '@mango/testing';
import { createProbeActivities } from './probe.activities';

describe('probe activities (real PostgreSQL)', () => {
  it("databaseTime returns PostgreSQL's clock as RFC 3339", async () => {
    const db = await createTestDatabase('probeact');
    const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      const t = await createProbeActivities({ dataSource: ds }).databaseTime();
      expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Math.abs(Date.parse(t) - Date.now())).toBeLessThan(60_000);
    } finally {
      await ds.destroy();
      await db.drop();
    }
  });
});
