import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Global, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ObjectStore } from '@mango/adapter-object-store';
import { DomainError, FILE_TEXT_READER, FileTextReader } from '@mango/domain-kernel';
import { createDataSource } from '@mango/persistence';
import { createTestDatabase, TestDatabase } from '@mango/testing';
import { DataSource } from 'typeorm';
import { FileTextAdmissionModule } from './file-text-admission';
import { FileObjects } from './file-objects';
import { DEFAULT_FILES_SETTINGS } from './files.settings';
import { ObjectCleanupRepository } from './object-cleanup.repository';
import { UploadFile } from './upload-file.usecase';

const WS = 'wrkspc_default';
const MAX = 1000;

describe('FileTextAdmission (real PostgreSQL + S3, through its Nest module)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let store: ObjectStore;
  let uploads: UploadFile;
  let reader: FileTextReader;
  let close: () => Promise<void>;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await createTestDatabase('filetext');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket: `mango-filetext-${randomBytes(3).toString('hex')}`,
    });
    await store.ensureBucket();
    const settings = DEFAULT_FILES_SETTINGS;
    uploads = new UploadFile(ds, new ObjectCleanupRepository(ds), new FileObjects(store, settings), settings);
    @Global()
    @Module({ providers: [{ provide: DataSource, useValue: ds }], exports: [DataSource] })
    class Db {}
    @Module({ imports: [Db, FileTextAdmissionModule.forRoot({ store, maxBytes: MAX })] })
    class TestApp {}
    const moduleRef = await NestFactory.createApplicationContext(TestApp, { logger: false });
    reader = moduleRef.get(FILE_TEXT_READER);
    close = () => moduleRef.close();
  });
  afterAll(async () => {
    await close();
    await ds.destroy();
    await db.drop();
    const names: string[] = [];
    for await (const o of store.client.listObjectsV2(store.bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length > 0) await store.client.removeObjects(store.bucket, names);
    await store.client.removeBucket(store.bucket);
  });

  const stored = async (bytes: Buffer, mimeType = 'text/plain', workspaceId = WS): Promise<string> => {
    const pending = await uploads.begin(workspaceId, { filename: 'f', mimeType });
    const size = await uploads.write(pending, Readable.from([bytes]));
    return (await uploads.commit(pending, size)).id;
  };
  const refusal = async (fileId: string, workspaceId = WS) => {
    const err = await reader.readText(workspaceId, fileId).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    const e = err as DomainError;
    return { code: e.code, reason: e.details?.reason, message: e.message };
  };

  it('returns the text of a UTF-8 File within the bound (exactly the bound included), BOM dropped', async () => {
    const text = 'héllo ✓ 𝄞\n';
    const id = await stored(Buffer.from(text), 'text/markdown');
    expect(await reader.readText(WS, id)).toEqual({
      fileId: id,
      filename: 'f',
      mimeType: 'text/markdown',
      sizeBytes: Buffer.byteLength(text),
      text,
    });
    const exact = 'a'.repeat(MAX);
    expect(
      (await reader.readText(WS, await stored(Buffer.from(exact), 'application/octet-stream'))).text,
    ).toBe(exact);
    const bom = await stored(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('x')]));
    expect((await reader.readText(WS, bom)).text).toBe('x');
    expect((await reader.readText(WS, await stored(Buffer.alloc(0)))).text).toBe('');
  });

  it.each([
    ['a File over the bound', () => Buffer.from('a'.repeat(MAX + 1)), 'text/plain', 'too_large'],
    ['invalid UTF-8', () => Buffer.from([0x61, 0xff, 0x62]), 'text/plain', 'not_utf8'],
    ['a truncated multi-byte sequence', () => Buffer.from([0x61, 0xe2, 0x9c]), 'text/plain', 'not_utf8'],
    ['an overlong encoding', () => Buffer.from([0xc0, 0xaf]), 'text/plain', 'not_utf8'],
    ['a UTF-16 surrogate encoded in UTF-8', () => Buffer.from([0xed, 0xa0, 0x80]), 'text/plain', 'not_utf8'],
    ['an image by media type', () => Buffer.from('looks like text'), 'image/png', 'image'],
    ['an SVG (image media type)', () => Buffer.from('<svg/>'), 'image/svg+xml', 'image'],
    ['a PDF by media type', () => Buffer.from('%PDF-1.7 text'), 'application/pdf', 'pdf'],
    ['a PDF uploaded as text', () => Buffer.from('%PDF-1.7\n1 0 obj\n'), 'text/plain', 'pdf'],
    [
      'a PNG uploaded as octet-stream',
      () => Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]),
      'application/octet-stream',
      'image',
    ],
    ['a JPEG', () => Buffer.from([0xff, 0xd8, 0xff, 0xe0]), 'application/octet-stream', 'image'],
  ])('refuses %s with 400 (%#)', async (_label, bytes, mime, reason) => {
    const id = await stored(bytes(), mime);
    const r = await refusal(id);
    expect([r.code, r.reason]).toEqual(['invalid_request', reason]);
    expect(r.message).toContain(id);
  });

  it("is 404 for an unknown File, a wrong prefix, another Workspace's File, and a File whose object vanished", async () => {
    expect((await refusal('file_01JD2Y3QX9V5M8K7R6T4W2P0AB')).code).toBe('not_found');
    expect((await refusal('agent_01JD2Y3QX9V5M8K7R6T4W2P0AB')).code).toBe('not_found');
    const id = await stored(Buffer.from('mine'));
    await ds.query(`INSERT INTO workspaces (id, name) VALUES ('wrkspc_01JD2Y3QX9V5M8K7R6T4W2P0AB', 'o')`);
    expect((await refusal(id, 'wrkspc_01JD2Y3QX9V5M8K7R6T4W2P0AB')).code).toBe('not_found');
    const [{ object_key }] = await ds.query('SELECT object_key FROM files WHERE id = $1', [id]);
    await store.client.removeObject(store.bucket, object_key);
    expect((await refusal(id)).code).toBe('not_found');
  });
});
