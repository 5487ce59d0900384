import { FilesUnderTest, startFiles, waitFor } from './support';

/**
 * apps/files writes to the audit log as apps/api does (docs/api-guide.md, "Audit log"): an upload and a
 * delete each leave one row naming the key, the File and the outcome; a download leaves none.
 */
describe('audit log of apps/files (real apps/files process, PostgreSQL, S3)', () => {
  let files: FilesUnderTest;
  beforeAll(async () => {
    files = await startFiles('files-audit');
  });
  afterAll(() => files.close());

  it('records an upload, a refused upload and a delete, not a download', async () => {
    const workspace = await files.createWorkspace();
    const key = await files.issueKey(workspace);
    const auth = { authorization: `Bearer ${key.api_key}` };
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('audited\n')], { type: 'text/plain' }), 'a.txt');
    const uploaded = await fetch(`${files.url}/v1/files`, { method: 'POST', headers: auth, body: form });
    expect(uploaded.status).toBe(201);
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const refused = await fetch(`${files.url}/v1/files`, {
      method: 'POST',
      headers: auth,
      body: new FormData(),
    });
    expect(refused.status).toBe(400);
    expect((await fetch(`${files.url}/v1/files/${fileId}/content`, { headers: auth })).status).toBe(200);
    const deleted = await fetch(`${files.url}/v1/files/${fileId}`, { method: 'DELETE', headers: auth });
    expect(deleted.status).toBe(200);

    const rows = await waitFor(async () => {
      const r = await files.sql<Record<string, unknown>>(
        `SELECT operation, resource_id, status_code, outcome, actor_kind, actor_id, actor_label, request_id
           FROM audit_log WHERE workspace_id = $1 ORDER BY id`,
        [workspace],
      );
      return r.length >= 3 ? r : undefined;
    });
    expect(rows).toEqual([
      {
        operation: 'POST /v1/files',
        resource_id: fileId,
        status_code: 201,
        outcome: 'succeeded',
        actor_kind: 'workspace_key',
        actor_id: key.id,
        actor_label: 'test',
        request_id: uploaded.headers.get('request-id'),
      },
      expect.objectContaining({
        operation: 'POST /v1/files',
        resource_id: null,
        status_code: 400,
        outcome: 'failed',
      }),
      expect.objectContaining({
        operation: 'DELETE /v1/files/{file_id}',
        resource_id: fileId,
        status_code: 200,
        outcome: 'succeeded',
        request_id: deleted.headers.get('request-id'),
      }),
    ]);
  });
});
