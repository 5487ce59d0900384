import { randomBytes } from 'node:crypto';
import { ObjectStore } from '@mango/adapter-object-store';
import {
  contractRoutes,
  createTestDatabase,
  FILES_ROUTES,
  openApi,
  servedRoutes,
  TestDatabase,
} from '@mango/testing';
import { bootstrap, RunningFiles } from '../src/bootstrap';

describe('openapi.yaml is the contract of apps/files', () => {
  let db: TestDatabase;
  let files: RunningFiles;
  const bucket = `mango-contract-${randomBytes(3).toString('hex')}`;
  beforeAll(async () => {
    db = await createTestDatabase('filescontract');
    files = await bootstrap({
      MANGO_DATABASE_URL: db.url,
      MANGO_FILES_PORT: '0',
      MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT,
      MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY,
      MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY,
      MANGO_S3_BUCKET: bucket,
      MANGO_LOG_LEVEL: 'warn',
    });
  });
  afterAll(async () => {
    await files.close();
    await db.drop();
    const store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket,
    });
    await store.client.removeBucket(bucket);
  });

  it('every served route is described in openapi.yaml', () => {
    const described = new Set(contractRoutes());
    expect(servedRoutes(files.app).filter((r) => !described.has(r))).toEqual([]);
  });

  it('every /v1/files* and /v1/skills* route openapi.yaml describes is served by apps/files, and nothing else under /v1', () => {
    const served = new Set(servedRoutes(files.app));
    expect(contractRoutes().filter((r) => FILES_ROUTES.test(r) && !served.has(r))).toEqual([]);
    expect([...served].filter((r) => r.includes(' /v1/') && !FILES_ROUTES.test(r))).toEqual([]);
  });

  it('serves the five Files operations under their operationIds', () => {
    const ops = Object.entries(openApi().paths)
      .filter(([path]) => path.startsWith('/v1/files'))
      .flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([m]) => ['get', 'post', 'delete'].includes(m))
          .map(([m, op]) => `${op.operationId} ${m.toUpperCase()} ${path}`),
      );
    expect(ops.sort()).toEqual([
      'files.content GET /v1/files/{file_id}/content',
      'files.delete DELETE /v1/files/{file_id}',
      'files.list GET /v1/files',
      'files.retrieve GET /v1/files/{file_id}',
      'files.upload POST /v1/files',
    ]);
    expect(servedRoutes(files.app).filter((r) => r.includes('/v1/files'))).toHaveLength(5);
  });

  it('serves the nine Skills operations under their operationIds', () => {
    const ops = Object.entries(openApi().paths)
      .filter(([path]) => path.startsWith('/v1/skills'))
      .flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([m]) => ['get', 'post', 'delete'].includes(m))
          .map(([m, op]) => `${op.operationId} ${m.toUpperCase()} ${path}`),
      );
    expect(ops.sort()).toEqual([
      'skills.create POST /v1/skills',
      'skills.delete DELETE /v1/skills/{skill_id}',
      'skills.list GET /v1/skills',
      'skills.retrieve GET /v1/skills/{skill_id}',
      'skills.versions.content GET /v1/skills/{skill_id}/versions/{version}/content',
      'skills.versions.create POST /v1/skills/{skill_id}/versions',
      'skills.versions.delete DELETE /v1/skills/{skill_id}/versions/{version}',
      'skills.versions.list GET /v1/skills/{skill_id}/versions',
      'skills.versions.retrieve GET /v1/skills/{skill_id}/versions/{version}',
    ]);
    expect(servedRoutes(files.app).filter((r) => r.includes('/v1/skills'))).toHaveLength(9);
  });
});
