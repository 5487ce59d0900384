import { mcpResultFileId } from '@mango/activities';
import { ObjectStore } from '@mango/adapter-object-store';
import { createDataSource } from '@mango/persistence';
import { createTestDatabase, dropBucket, freshBucketEnv, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { McpResultFileStore } from '../src/mcp-result-files';

/**
 * Large MCP results as Files, against real PostgreSQL and S3: the File is written through the Files
 * upload use case (no cleanup intent left behind), the bucket is made when apps/files has not made it
 * yet, and storing the same call's File again (an activity retry) keeps the first one untouched.
 */
describe('McpResultFileStore (real PostgreSQL and S3)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const s3 = freshBucketEnv('mcpfile');
  let store: ObjectStore;
  let files: McpResultFileStore;

  beforeAll(async () => {
    db = await createTestDatabase('mcpfile');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    store = new ObjectStore({
      endpoint: s3.MANGO_S3_ENDPOINT!,
      accessKey: s3.MANGO_S3_ACCESS_KEY!,
      secretKey: s3.MANGO_S3_SECRET_KEY!,
      region: s3.MANGO_S3_REGION!,
      bucket: s3.MANGO_S3_BUCKET!,
    });
    files = new McpResultFileStore(ds, store);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
    await dropBucket(s3).catch(() => undefined);
  });

  const read = async (key: string) => {
    const chunks: Buffer[] = [];
    for await (const c of await store.client.getObject(store.bucket, key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  it('derives the File id from the call id', () => {
    expect(mcpResultFileId('sevt_01JD2Y3QX9V5M8K7R6T4W2P0AB')).toBe('file_01JD2Y3QX9V5M8K7R6T4W2P0AB');
  });

  it('stores the text as a File of the Workspace; a second store of the same call keeps the first', async () => {
    const fileId = mcpResultFileId('sevt_01JD2Y3QX9V5M8K7R6T4W2P0AC');
    const text = 'é'.repeat(70_000) + '\nend';
    expect(await store.client.bucketExists(store.bucket)).toBe(false);
    await files.store({ workspaceId: 'wrkspc_default', fileId, filename: 'mcp-result-big.txt', text });
    const rows = await ds.query('SELECT * FROM files WHERE id = $1', [fileId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      workspace_id: 'wrkspc_default',
      filename: 'mcp-result-big.txt',
      mime_type: 'text/plain',
      size_bytes: String(Buffer.byteLength(text, 'utf8')),
    });
    expect(await read(rows[0].object_key)).toBe(text);
    expect(await ds.query('SELECT * FROM object_cleanups')).toEqual([]);

    // The retried call: the same id, whatever it carries, changes nothing.
    await files.store({ workspaceId: 'wrkspc_default', fileId, filename: 'other.txt', text: 'other' });
    const again = await ds.query('SELECT * FROM files WHERE id = $1', [fileId]);
    expect(again).toEqual(rows);
    expect(await read(rows[0].object_key)).toBe(text);
    expect(await ds.query('SELECT * FROM object_cleanups')).toEqual([]);
  });
});
