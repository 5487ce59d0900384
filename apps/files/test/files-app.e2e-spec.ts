import { randomBytes } from 'node:crypto';
import {
  answers,
  AppProcess,
  createTestDatabase,
  freePort,
  httpClient,
  startApp,
  TestDatabase,
} from '@mango/testing';

describe('apps/files boots for real (PostgreSQL + S3)', () => {
  let db: TestDatabase;
  let app: AppProcess;
  let url: string;
  const bucket = `mango-files-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    db = await createTestDatabase('files');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    app = await startApp(
      'apps/files/src/main.ts',
      {
        MANGO_DATABASE_URL: db.url,
        MANGO_FILES_PORT: String(port),
        MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
        MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
        MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
        MANGO_S3_BUCKET: bucket,
        MANGO_LOG_LEVEL: 'warn',
      },
      answers(`${url}/healthz`),
    );
  });
  afterAll(async () => {
    await app.stop();
    await db.drop();
  });

  it('is ready when PostgreSQL and the object store answer, and created its bucket', async () => {
    const res = await httpClient(url).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', object_store: 'ok' } });
  });

  it('answers unknown routes with the error envelope', async () => {
    const res = await fetch(`${url}/v1/nothing`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { type: string }; request_id: string };
    expect(body.error.type).toBe('not_found_error');
    expect(body.request_id).toMatch(/^req_/);
  });

  it('exits 0 on SIGTERM', async () => {
    expect(await app.stop('SIGTERM')).toBe(0);
  });
});

describe('apps/files configuration', () => {
  it('refuses to boot with one error naming every bad variable', async () => {
    const port = await freePort();
    await expect(
      startApp(
        'apps/files/src/main.ts',
        { MANGO_DATABASE_URL: 'mysql://x', MANGO_FILES_PORT: String(port), MANGO_S3_BUCKET: 'NO' },
        async () => false,
        90_000,
      ),
    ).rejects.toThrow(
      /MANGO_DATABASE_URL[\s\S]*MANGO_S3_ENDPOINT|MANGO_S3_ENDPOINT[\s\S]*MANGO_DATABASE_URL/,
    );
  }, 120_000);
});
