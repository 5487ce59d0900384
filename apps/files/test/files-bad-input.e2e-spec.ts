import { randomBytes } from 'node:crypto';
import { httpClient } from '@mango/testing';
import { filePart, FilesUnderTest, MIB, multipart, rawPost, split, startFiles, upload } from './support';

const MAX = 6 * MIB;

/**
 * Refused uploads store nothing: no File row, no cleanup row, no object and no unfinished multipart
 * upload. The limit (6 MiB) is above the part size (5 MiB), so an oversize upload has already sent a
 * part to the object store when it is refused.
 */
describe('Files: bad input, limits and credentials (real apps/files process)', () => {
  let files: FilesUnderTest;
  let key: string;
  const nothingStored = { files: 0, cleanups: 0, objects: [], incomplete: [] };
  beforeAll(async () => {
    files = await startFiles('filesbad', {
      MANGO_FILES_MAX_BYTES: String(MAX),
      MANGO_FILES_PART_BYTES: String(5 * MIB),
    });
    key = (await files.issueKey('wrkspc_default')).api_key;
  });
  afterAll(() => files.close());

  const form = (...parts: Array<{ headers: string; body: Buffer | string }>) => multipart(parts);
  const field = (name: string, value = 'x') => ({
    headers: `Content-Disposition: form-data; name="${name}"`,
    body: value,
  });

  it.each<[string, { contentType: string; body: Buffer }, RegExp]>([
    [
      'a JSON body',
      { contentType: 'application/json', body: Buffer.from('{"file":"x"}') },
      /multipart\/form-data/,
    ],
    [
      'a raw octet-stream body',
      { contentType: 'application/octet-stream', body: randomBytes(64) },
      /multipart\/form-data/,
    ],
    [
      'multipart without a boundary',
      { contentType: 'multipart/form-data', body: Buffer.from('x') },
      /multipart\/form-data/,
    ],
    ['an empty form', form(), /no "file" part/],
    ['a form with only another field', form(field('purpose')), /unexpected field "purpose"/],
    [
      'a part named otherwise',
      form({ ...filePart('abc'), headers: filePart('abc').headers.replace('name="file"', 'name="upload"') }),
      /unexpected part "upload"/,
    ],
    ['a "file" part without a filename', form(field('file', 'abc')), /needs a filename/],
    ['two "file" parts', form(filePart('one'), filePart('two')), /only one "file" part/],
    ['a field after the file', form(filePart('abc'), field('purpose')), /unexpected field "purpose"/],
    [
      'a control character in the filename',
      form({ headers: `Content-Disposition: form-data; name="file"; filename*=UTF-8''a%0Ab.txt`, body: 'x' }),
      /control characters/,
    ],
    [
      'a truncated body',
      (() => {
        const f = form(filePart(randomBytes(1000)));
        return { contentType: f.contentType, body: f.body.subarray(0, f.body.length - 20) };
      })(),
      /malformed multipart/,
    ],
  ])('refuses %s with 400 and stores nothing', async (_label, { contentType, body }, message) => {
    const res = await rawPost(files.url, key, contentType, split(body, 3), { contentLength: body.length });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toMatch(message);
    expect(await files.stored()).toEqual(nothingStored);
  });

  it('refuses a File whose Content-Length is over the limit with 413 before reading it', async () => {
    const res = await upload(files.url, key, randomBytes(MAX + 512 * 1024), 'big.bin');
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('request_too_large');
    expect(await files.stored()).toEqual(nothingStored);
  });

  it('refuses a File one byte over the limit with 413 (Content-Length within the framing allowance)', async () => {
    const res = await upload(files.url, key, randomBytes(MAX + 1), 'big.bin');
    expect(res.status).toBe(413);
    expect(await files.stored()).toEqual(nothingStored);
  });

  it('refuses a chunked upload that crosses the limit after a part was written, and leaves no object or unfinished upload', async () => {
    const f = multipart([filePart(randomBytes(MAX + 2 * MIB), 'stream.bin')]);
    const res = await rawPost(files.url, key, f.contentType, split(f.body, 128));
    expect(res.status).toBe(413);
    expect(res.body.error.message).toMatch(/at most 6291456 bytes/);
    expect(await files.stored()).toEqual(nothingStored);
  });

  it('accepts a File of exactly the limit', async () => {
    const res = await upload(files.url, key, randomBytes(MAX), 'exact.bin');
    expect(res.status).toBe(201);
    expect(res.body.size_bytes).toBe(MAX);
    expect(await httpClient(files.url, key).delete(`/v1/files/${res.body.id}`)).toMatchObject({
      status: 200,
    });
    expect(await files.stored()).toEqual(nothingStored);
  });

  it.each([
    ['GET', '/v1/files/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['GET', '/v1/files/file_nope'],
    ['GET', '/v1/files/file_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['GET', '/v1/files/env_01JD2Y3QX9V5M8K7R6T4W2P0AB/content'],
    ['GET', '/v1/files/file_01JD2Y3QX9V5M8K7R6T4W2P0AB/content'],
    ['DELETE', '/v1/files/work_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['DELETE', '/v1/files/file_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
  ])('%s %s (wrong prefix or unknown File) is 404', async (method, path) => {
    const res = await httpClient(files.url, key).request(method, path);
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found_error');
  });

  describe('credentials', () => {
    let fileId: string;
    beforeAll(async () => {
      fileId = (await upload(files.url, key, Buffer.from('owned'), 'owned.txt')).body.id;
    });
    afterAll(async () => {
      await httpClient(files.url, key).delete(`/v1/files/${fileId}`);
    });

    const operations = (id: () => string): Array<[string, string]> => [
      ['GET', '/v1/files'],
      ['GET', `/v1/files/${id()}`],
      ['GET', `/v1/files/${id()}/content`],
      ['DELETE', `/v1/files/${id()}`],
    ];

    it('an Environment key is 403 on every Files operation, upload included, and changes nothing', async () => {
      const envKey = (await files.issueKey('wrkspc_default', await files.createEnvironment('wrkspc_default')))
        .api_key;
      const before = await files.stored();
      const up = await upload(files.url, envKey, Buffer.from('nope'), 'nope.txt');
      expect(up.status).toBe(403);
      expect(up.body.error.type).toBe('permission_error');
      for (const [method, path] of operations(() => fileId)) {
        const res = await httpClient(files.url, envKey).request(method, path);
        expect([method, path, res.status]).toEqual([method, path, 403]);
      }
      expect(await files.stored()).toEqual(before);
    });

    it('a live Work token is 403 permission_error on every Files operation and changes nothing', async () => {
      const env = await files.createEnvironment('wrkspc_default');
      const token = await files.createWorkToken('wrkspc_default', env);
      const before = await files.stored();
      const up = await upload(files.url, token, Buffer.from('nope'), 'nope.txt');
      expect([up.status, up.body.error.type]).toEqual([403, 'permission_error']);
      for (const [method, path] of operations(() => fileId)) {
        const res = await httpClient(files.url, token).request(method, path);
        expect([method, path, res.status, res.body.error.type]).toEqual([
          method,
          path,
          403,
          'permission_error',
        ]);
      }
      expect(await files.stored()).toEqual(before);
    });

    it('a Work token whose lease ran out is 401 on every Files operation', async () => {
      const env = await files.createEnvironment('wrkspc_default');
      const token = await files.createWorkToken('wrkspc_default', env);
      await files.sql(
        `UPDATE work_items SET lease_expires_at = now() - interval '1 second' WHERE environment_id = $1`,
        [env],
      );
      const up = await upload(files.url, token, Buffer.from('nope'), 'nope.txt');
      expect([up.status, up.body.error.type]).toEqual([401, 'authentication_error']);
      for (const [method, path] of operations(() => fileId)) {
        const res = await httpClient(files.url, token).request(method, path);
        expect([method, path, res.status]).toEqual([method, path, 401]);
      }
    });

    it('no credential is 401', async () => {
      const f = multipart([filePart('x')]);
      const res = await fetch(`${files.url}/v1/files`, {
        method: 'POST',
        headers: { 'content-type': f.contentType },
        body: f.body,
      });
      expect(res.status).toBe(401);
    });
  });
});
