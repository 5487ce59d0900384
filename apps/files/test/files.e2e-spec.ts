import { createHash, randomBytes } from 'node:crypto';
import { ApiKeysService } from '@mango/feature-auth';
import { httpClient, HttpClient } from '@mango/testing';
import { download, FilesUnderTest, MIB, startFiles, upload } from './support';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('Files over HTTP (real apps/files process, PostgreSQL, S3)', () => {
  let files: FilesUnderTest;
  let key: string;
  let http: HttpClient;
  beforeAll(async () => {
    files = await startFiles('files', { MANGO_FILES_PART_BYTES: String(5 * MIB) });
    key = (await files.issueKey('wrkspc_default')).api_key;
    http = httpClient(files.url, key);
  });
  afterAll(() => files.close());

  it('uploads, lists, retrieves, downloads byte-exact and deletes a File; afterwards it is 404 and its object is gone', async () => {
    const bytes = Buffer.from('hello, mango\n');
    const up = await upload(files.url, key, bytes, 'hello.txt', 'text/plain');
    expect(up.status).toBe(201);
    expect(up.body).toEqual({
      id: expect.stringMatching(/^file_[0-9A-HJKMNP-TV-Z]{26}$/),
      type: 'file',
      filename: 'hello.txt',
      mime_type: 'text/plain',
      size_bytes: bytes.length,
      created_at: expect.stringMatching(/Z$/),
    });
    const id: string = up.body.id;
    const objectKey = `workspaces/wrkspc_default/files/${id}`;
    expect(await files.objectKeys()).toContain(objectKey);
    expect((await files.stored()).cleanups).toBe(0);

    const list = await http.get('/v1/files');
    expect(list.status).toBe(200);
    expect(list.body.data.find((f: { id: string }) => f.id === id)).toEqual(up.body);
    expect((await http.get(`/v1/files/${id}`)).body).toEqual(up.body);

    const got = await download(files.url, key, id);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(bytes)).toBe(true);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-length')).toBe(String(bytes.length));
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="hello.txt"; filename*=UTF-8''hello.txt`,
    );
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('request-id')).toMatch(/^req_/);

    const tomb = await http.delete(`/v1/files/${id}`);
    expect(tomb.status).toBe(200);
    expect(tomb.body).toEqual({ id, type: 'file_deleted' });
    expect((await http.get(`/v1/files/${id}`)).status).toBe(404);
    expect((await download(files.url, key, id)).body.error.type).toBe('not_found_error');
    expect((await http.delete(`/v1/files/${id}`)).status).toBe(404);
    expect((await http.get('/v1/files')).body.data.map((f: { id: string }) => f.id)).not.toContain(id);
    expect(await files.objectKeys()).not.toContain(objectKey);
    expect((await files.stored()).cleanups).toBe(0);
  });

  it('refuses a revoked Workspace key at once (401) on upload, metadata and download, though the key was just used; the refused upload stores nothing', async () => {
    const issued = await files.issueKey('wrkspc_default');
    const kept = await upload(files.url, issued.api_key, Buffer.from('kept'), 'kept.txt', 'text/plain');
    expect(kept.status).toBe(201);
    // Used on every route that the guard answers from its principal cache, so each is cached now.
    expect((await download(files.url, issued.api_key, kept.body.id)).status).toBe(200);
    expect((await httpClient(files.url, issued.api_key).get(`/v1/files/${kept.body.id}`)).status).toBe(200);
    const before = await files.stored();

    await new ApiKeysService(files.ds).revoke(issued.id);
    const refused = await upload(files.url, issued.api_key, randomBytes(64 * 1024), 'late.bin');
    expect(refused.status).toBe(401);
    expect(refused.body.error.type).toBe('authentication_error');
    const got = await download(files.url, issued.api_key, kept.body.id);
    expect(got.status).toBe(401);
    expect(got.body.error.type).toBe('authentication_error');
    const meta = await httpClient(files.url, issued.api_key).get(`/v1/files/${kept.body.id}`);
    expect(meta.status).toBe(401);
    expect(meta.body.error.type).toBe('authentication_error');
    // Nothing of the refused upload remains: no row, no cleanup intent, no object.
    expect(await files.stored()).toEqual(before);
    // The File itself is untouched; a live key still reads it.
    expect((await download(files.url, key, kept.body.id)).bytes.toString()).toBe('kept');
  });

  it('streams a 5 MiB File into the object store and returns it byte-exact with its content type', async () => {
    const bytes = randomBytes(5 * MIB);
    const up = await upload(files.url, key, bytes, 'five.tar', 'application/x-tar');
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      filename: 'five.tar',
      mime_type: 'application/x-tar',
      size_bytes: 5 * MIB,
    });
    const stat = await files.store.client.statObject(
      files.store.bucket,
      `workspaces/wrkspc_default/files/${up.body.id}`,
    );
    expect(stat.size).toBe(5 * MIB);
    const got = await download(files.url, key, up.body.id);
    expect(got.headers.get('content-type')).toBe('application/x-tar');
    expect(got.headers.get('content-length')).toBe(String(5 * MIB));
    expect(sha(got.bytes)).toBe(sha(bytes));
    expect(await files.incompleteUploads()).toEqual([]);
  });

  it('with MANGO_S3_PAYLOAD_SIGNING=unsigned stores a multipart File byte-exact (UNSIGNED-PAYLOAD accepted by the real S3 server)', async () => {
    const unsigned = await files.startProcess({
      MANGO_FILES_PART_BYTES: String(5 * MIB),
      MANGO_S3_PAYLOAD_SIGNING: 'unsigned',
    });
    for (const bytes of [randomBytes(1000), randomBytes(11 * MIB)]) {
      const up = await upload(unsigned.url, key, bytes, 'u.bin', 'application/octet-stream');
      expect(up.status).toBe(201);
      expect(up.body.size_bytes).toBe(bytes.length);
      const got = await download(unsigned.url, key, up.body.id);
      expect(sha(got.bytes)).toBe(sha(bytes));
    }
    expect(await files.incompleteUploads()).toEqual([]);
  });

  it('keeps empty Files and unicode filenames exactly', async () => {
    const empty = await upload(files.url, key, Buffer.alloc(0), 'résumé ✓.md', 'text/markdown');
    expect(empty.status).toBe(201);
    expect(empty.body).toMatchObject({ filename: 'résumé ✓.md', size_bytes: 0, mime_type: 'text/markdown' });
    const got = await download(files.url, key, empty.body.id);
    expect(got.bytes).toHaveLength(0);
    expect(got.headers.get('content-length')).toBe('0');
    const disposition = got.headers.get('content-disposition')!;
    expect(disposition).toMatch(/^attachment; filename="r_sum_ _\.md"; filename\*=UTF-8''/);
    expect(decodeURIComponent(/filename\*=UTF-8''(.+)$/.exec(disposition)![1]!)).toBe('résumé ✓.md');
  });

  it('lists newest first with opaque cursors; bad limits, foreign cursors and unknown parameters are 400', async () => {
    const ws = await files.createWorkspace();
    const ownKey = (await files.issueKey(ws)).api_key;
    const own = httpClient(files.url, ownKey);
    const ids: string[] = [];
    for (const name of ['a.txt', 'b.txt', 'c.txt'])
      ids.push((await upload(files.url, ownKey, Buffer.from(name), name)).body.id);

    const page1 = await own.get('/v1/files?limit=2');
    expect(page1.body.data.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.next_page).toEqual(expect.any(String));
    const page2 = await own.get(`/v1/files?limit=2&page=${page1.body.next_page}`);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_page: null });
    expect((await own.get('/v1/files')).body.data).toHaveLength(3);

    const foreign = Buffer.from(JSON.stringify(['environments', 'desc', ids[2]])).toString('base64url');
    for (const query of [
      'limit=0',
      'limit=1001',
      'limit=x',
      'page=%%%',
      `page=${foreign}`,
      'scope_id=sesn_1',
      'after_id=x',
    ]) {
      const res = await own.get(`/v1/files?${query}`);
      expect([query, res.status, res.body.error.type]).toEqual([query, 400, 'invalid_request_error']);
    }
  });

  it('keeps Workspaces apart: another Workspace gets 404 for metadata, bytes and delete, and does not list the File', async () => {
    const bytes = randomBytes(4096);
    const mine = (await upload(files.url, key, bytes, 'secret.bin', 'application/octet-stream')).body;
    const other = await files.createWorkspace();
    const otherKey = (await files.issueKey(other)).api_key;
    const theirs = httpClient(files.url, otherKey);

    const meta = await theirs.get(`/v1/files/${mine.id}`);
    expect(meta.status).toBe(404);
    expect(meta.body.error.type).toBe('not_found_error');
    const bytesAsOther = await download(files.url, otherKey, mine.id);
    expect(bytesAsOther.status).toBe(404);
    expect(bytesAsOther.bytes.includes(bytes.subarray(0, 64))).toBe(false);
    expect((await theirs.delete(`/v1/files/${mine.id}`)).status).toBe(404);
    expect((await theirs.get('/v1/files')).body.data.map((f: { id: string }) => f.id)).not.toContain(mine.id);

    // Their own upload lands under their own prefix; the first File is untouched.
    const their = (await upload(files.url, otherKey, Buffer.from('theirs'), 'theirs.txt')).body;
    expect(await files.objectKeys()).toContain(`workspaces/${other}/files/${their.id}`);
    expect(sha((await download(files.url, key, mine.id)).bytes)).toBe(sha(bytes));
  });
});
