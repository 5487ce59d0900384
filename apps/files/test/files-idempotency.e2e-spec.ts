import { assertMatchesContract } from '@mango/testing';
import { FilesUnderTest, startFiles } from './support';

/**
 * `Idempotency-Key` on `POST /v1/files` (docs/api-guide.md, "Idempotent requests"): the File row and the
 * key commit in one transaction at the end of the upload; a repeat uploads its bytes again, finds the key
 * at that commit and replays the first response, and its own object is removed as any abandoned upload's.
 */
describe('Idempotency-Key on File uploads (real apps/files process, PostgreSQL, S3)', () => {
  let files: FilesUnderTest;
  let key: string;
  let workspace: string;
  beforeAll(async () => {
    files = await startFiles('files-idem');
    workspace = await files.createWorkspace();
    key = (await files.issueKey(workspace)).api_key;
  });
  afterAll(() => files.close());

  async function upload(bytes: Buffer, idempotencyKey: string, filename = 'notes.txt') {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'text/plain' }), filename);
    const res = await fetch(`${files.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
      body: form,
    });
    const body = (await res.json()) as any;
    assertMatchesContract('POST', '/v1/files', res.status, body);
    return { status: res.status, body, headers: res.headers };
  }
  const rows = async () =>
    Number(
      (
        await files.sql<{ n: string }>('SELECT count(*) AS n FROM files WHERE workspace_id = $1', [workspace])
      )[0]!.n,
    );
  const objects = async () =>
    (await files.objectKeys()).filter((k) => k.startsWith(`workspaces/${workspace}/`));

  it('an upload repeated with its key stores one File and one object, and replays the first response', async () => {
    const first = await upload(Buffer.from('once\n'), 'upload-1');
    const again = await upload(Buffer.from('once\n'), 'upload-1');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('request-id')).toBe(first.headers.get('request-id'));
    expect(await rows()).toBe(1);
    expect(await objects()).toEqual([`workspaces/${workspace}/files/${first.body.id}`]);
    expect((await files.stored()).cleanups).toBe(0);
  });

  it('the same key with other bytes or another filename is 409 idempotency_key_reused and stores nothing', async () => {
    await upload(Buffer.from('first\n'), 'upload-2');
    const before = { rows: await rows(), objects: await objects() };
    for (const [bytes, name] of [
      [Buffer.from('second\n'), 'notes.txt'],
      [Buffer.from('first\n'), 'other.txt'],
    ] as const) {
      const other = await upload(bytes, 'upload-2', name);
      expect(other.status).toBe(409);
      expect(other.body.error.details).toEqual({ error_code: 'idempotency_key_reused' });
    }
    expect(await rows()).toBe(before.rows);
    expect(await objects()).toEqual(before.objects);
    expect((await files.stored()).cleanups).toBe(0);
  });

  it('8 concurrent uploads with one key store one File; the others replay it or are told it is in progress, and leave no object', async () => {
    const before = { rows: await rows(), objects: (await objects()).length };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => upload(Buffer.from('burst\n'), 'upload-3')),
    );
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(await rows()).toBe(before.rows + 1);
    expect((await objects()).length).toBe(before.objects + 1);
    expect((await files.stored()).cleanups).toBe(0);
  });
});
