import { contractRoutes, createTestDatabase, FILES_ROUTES, servedRoutes, TestDatabase } from '@mango/testing';
import { bootstrap, RunningApi } from '../src/bootstrap';

describe('openapi.yaml is the contract of apps/api', () => {
  let db: TestDatabase;
  let api: RunningApi;
  beforeAll(async () => {
    db = await createTestDatabase('contract');
    api = await bootstrap({
      MANGO_DATABASE_URL: db.url,
      MANGO_API_PORT: '0',
      MANGO_LOG_LEVEL: 'warn',
      MANGO_ENV: 'development',
    });
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it('every served route is described in openapi.yaml', () => {
    const described = new Set(contractRoutes());
    const missing = servedRoutes(api.app).filter((r) => !described.has(r));
    expect(missing).toEqual([]);
  });

  it('every route openapi.yaml describes is served (files/skills by apps/files)', () => {
    const served = new Set(servedRoutes(api.app));
    const unserved = contractRoutes().filter((r) => !FILES_ROUTES.test(r) && !served.has(r));
    expect(unserved).toEqual([]);
  });

  it('finds a reasonable number of routes (the router introspection works)', () => {
    expect(servedRoutes(api.app).length).toBeGreaterThanOrEqual(14);
  });
});
