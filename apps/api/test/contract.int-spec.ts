import { contractRoutes, createTestDatabase, TestDatabase } from '@mango/testing';
import { bootstrap, RunningApi } from '../src/bootstrap';

/** Routes that the ingress sends to apps/files instead; apps/files has its own coverage test. */
const FILES_ROUTES = /^(GET|POST|DELETE) \/v1\/(files|skills)/;

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

function servedRoutes(api: RunningApi): string[] {
  const express = api.app.getHttpAdapter().getInstance() as { router: { stack: RouterLayer[] } };
  return express.router.stack
    .filter((l) => l.route)
    .flatMap((l) =>
      Object.keys(l.route!.methods)
        .filter((m) => m !== '_all')
        .map(
          (m) =>
            `${m.toUpperCase()} ${l.route!.path.replace(/:([A-Za-z]+)/g, (_, name: string) => `{${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}}`)}`,
        ),
    );
}

describe('openapi.yaml is the contract of apps/api', () => {
  let db: TestDatabase;
  let api: RunningApi;
  beforeAll(async () => {
    db = await createTestDatabase('contract');
    api = await bootstrap({ MANGO_DATABASE_URL: db.url, MANGO_API_PORT: '0', MANGO_LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it('every served route is described in openapi.yaml', () => {
    const described = new Set(contractRoutes());
    const missing = servedRoutes(api).filter((r) => !described.has(r));
    expect(missing).toEqual([]);
  });

  it('every route openapi.yaml describes is served (files/skills by apps/files)', () => {
    const served = new Set(servedRoutes(api));
    const unserved = contractRoutes().filter((r) => !FILES_ROUTES.test(r) && !served.has(r));
    expect(unserved).toEqual([]);
  });

  it('finds a reasonable number of routes (the router introspection works)', () => {
    expect(servedRoutes(api).length).toBeGreaterThanOrEqual(14);
  });
});
