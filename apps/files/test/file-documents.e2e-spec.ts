import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  HttpClient,
  startApi,
  startFilesApp,
} from '@mango/testing';

/**
 * File messages support bounded UTF-8 documents (docs/capabilities.md), over real processes: a File uploaded to
 * apps/files is admitted by apps/api into a user.message only as bounded UTF-8 text (the event keeps the
 * text); images, PDFs, oversize or non-UTF-8 Files and unknown ids are refused and nothing is appended.
 */
describe('File documents in Session events (real apps/api + apps/files, PostgreSQL, S3)', () => {
  let api: ApiUnderTest;
  let files: AppProcess;
  let filesUrl: string;
  let key: string;
  let ws: HttpClient;
  let agent: string;
  let env: string;
  const s3 = freshBucketEnv('filedocs');

  beforeAll(async () => {
    api = await startApi('filedocs', { ...s3, MANGO_FILES_TEXT_MAX_BYTES: '64' });
    const started = await startFilesApp(api.db.url, s3);
    files = started.app;
    filesUrl = started.url;
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    agent = (await ws.post('/v1/agents', { name: 'reader', model: 'claude-sonnet-4-6' })).body.id;
    env = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  }, 120_000);

  afterAll(async () => {
    await files?.stop();
    await api?.close();
    await dropBucket(s3);
  });

  async function upload(name: string, type: string, bytes: Uint8Array | string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type }), name);
    const res = await fetch(`${filesUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const body = (await res.json()) as { id: string };
    expect(res.status).toBe(201);
    return body.id;
  }
  const doc = (fileId: string, title?: string) => ({
    type: 'user.message',
    content: [{ type: 'document', source: { type: 'file', file_id: fileId }, ...(title ? { title } : {}) }],
  });
  const count = async () =>
    Number((await api.sql<{ n: string }>('SELECT count(*) AS n FROM session_events'))[0]!.n);

  it('admits a UTF-8 text File as a text document (title defaults to the filename), at creation and later', async () => {
    const notes = await upload('notes.txt', 'text/plain', 'héllo, world\n');
    const s = (await ws.post('/v1/sessions', { agent, environment_id: env, initial_events: [doc(notes)] }))
      .body;
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [doc(notes, 'Again')] });
    const events = (await ws.get(`/v1/sessions/${s.id}/events`)).body.data;
    expect(events.map((e: any) => e.content[0])).toEqual([
      {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'héllo, world\n' },
        title: 'notes.txt',
        context: null,
      },
      {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'héllo, world\n' },
        title: 'Again',
        context: null,
      },
    ]);
    // The event keeps the text: deleting the File changes nothing.
    expect(
      (
        await fetch(`${filesUrl}/v1/files/${notes}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${key}` },
        })
      ).status,
    ).toBe(200);
    expect((await ws.get(`/v1/sessions/${s.id}/events`)).body.data[0].content[0].source.data).toBe(
      'héllo, world\n',
    );
  });

  it.each([
    [
      'an image',
      () => upload('pic.png', 'image/png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
      400,
      /image/i,
    ],
    ['a PDF', () => upload('doc.pdf', 'application/pdf', '%PDF-1.7\n'), 400, /pdf/i],
    ['a File over the bound', () => upload('big.txt', 'text/plain', 'x'.repeat(65)), 400, /at most 64/],
    [
      'bytes that are not UTF-8',
      () => upload('bin.txt', 'text/plain', new Uint8Array([0x61, 0xff, 0xfe, 0x62])),
      400,
      /UTF-8/,
    ],
    ['an unknown File', async () => 'file_01JD2Y3QX9V5M8K7R6T4W2P0ZZ', 400, /not found/],
  ])('refuses %s and appends nothing', async (_name, make, status, message) => {
    const fileId = await make();
    const s = (await ws.post('/v1/sessions', { agent, environment_id: env })).body;
    const before = await count();
    const res = await ws.post(`/v1/sessions/${s.id}/events`, { events: [doc(fileId)] });
    expect(res.status).toBe(status);
    expect(res.body.error.message).toMatch(message);
    const created = await ws.post('/v1/sessions', {
      agent,
      environment_id: env,
      initial_events: [doc(fileId)],
    });
    expect(created.status).toBe(status);
    expect(await count()).toBe(before);
  });
});
