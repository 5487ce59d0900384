import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ObjectStore } from '@mango/adapter-object-store';
import { FILE_TEXT_READER, FileTextReader } from '@mango/domain-kernel';
import {
  DEFAULT_FILES_SETTINGS,
  FileObjects,
  ObjectCleanupRepository,
  UploadFile,
} from '@mango/feature-files';
import { createDataSource } from '@mango/persistence';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { bootstrap, RunningApi } from '../src/bootstrap';

/** apps/api binds FILE_TEXT_READER (bounded UTF-8 File text for event admission) only with object storage. */
describe('apps/api FILE_TEXT_READER (real PostgreSQL + S3)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let store: ObjectStore;
  const running: RunningApi[] = [];
  const s3 = {
    endpoint: process.env.MANGO_S3_ENDPOINT!,
    accessKey: process.env.MANGO_S3_ACCESS_KEY!,
    secretKey: process.env.MANGO_S3_SECRET_KEY!,
    region: process.env.MANGO_S3_REGION ?? 'us-east-1',
  };
  const bucket = `mango-apitext-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    db = await createTestDatabase('apifiletext');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    store = new ObjectStore({ ...s3, bucket });
    await store.ensureBucket();
  });
  afterAll(async () => {
    await Promise.all(running.map((r) => r.close()));
    await ds.destroy();
    await db.drop();
    const names: string[] = [];
    for await (const o of store.client.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length) await store.client.removeObjects(bucket, names);
    await store.client.removeBucket(bucket);
  });

  const boot = async (extra: Record<string, string>) => {
    const api = await bootstrap({
      MANGO_DATABASE_URL: db.url,
      MANGO_API_PORT: '0',
      MANGO_ENV: 'development',
      MANGO_LOG_LEVEL: 'fatal',
      MANGO_DB_POOL_SIZE: '2',
      ...extra,
    });
    running.push(api);
    return api;
  };

  it('with MANGO_S3_* set, reads a File of the same bucket as text within MANGO_FILES_TEXT_MAX_BYTES', async () => {
    const api = await boot({
      MANGO_S3_ENDPOINT: s3.endpoint,
      MANGO_S3_ACCESS_KEY: s3.accessKey,
      MANGO_S3_SECRET_KEY: s3.secretKey,
      MANGO_S3_REGION: s3.region,
      MANGO_S3_BUCKET: bucket,
      MANGO_FILES_TEXT_MAX_BYTES: '5',
    });
    const uploads = new UploadFile(
      ds,
      new ObjectCleanupRepository(ds),
      new FileObjects(store, DEFAULT_FILES_SETTINGS),
      DEFAULT_FILES_SETTINGS,
    );
    const put = async (text: string) => {
      const pending = await uploads.begin('wrkspc_default', { filename: 'n.txt', mimeType: 'text/plain' });
      return (await uploads.commit(pending, await uploads.write(pending, Readable.from([Buffer.from(text)]))))
        .id;
    };
    const reader = api.app.get<FileTextReader>(FILE_TEXT_READER);
    expect((await reader.readText('wrkspc_default', await put('hello'))).text).toBe('hello');
    await expect(reader.readText('wrkspc_default', await put('hello!'))).rejects.toMatchObject({
      details: { reason: 'too_large' },
    });
  });

  it('without object storage there is no FILE_TEXT_READER, and half a key pair is a config error', async () => {
    const api = await boot({});
    expect(() => api.app.get(FILE_TEXT_READER)).toThrow();
    // An endpoint without keys takes the default credential chain (s3-credentials.ts); half a pair is a mistake.
    await expect(boot({ MANGO_S3_ENDPOINT: s3.endpoint, MANGO_S3_ACCESS_KEY: s3.accessKey })).rejects.toThrow(
      /MANGO_S3_ACCESS_KEY and MANGO_S3_SECRET_KEY go together/,
    );
  });
});
