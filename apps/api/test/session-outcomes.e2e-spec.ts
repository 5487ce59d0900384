import {
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  HttpClient,
  startFilesApp,
} from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * `user.define_outcome` admission (docs/api-guide.md "Outcomes — choices") over real apps/api and
 * apps/files processes on PostgreSQL and S3: accepted at creation and later, echoed with its `outc_` id
 * and processed on receipt, starting work (running, Work item, outbox row); File rubrics read as bounded
 * UTF-8 text; every bad input a 400 (or 409) that appends nothing.
 */
describe('user.define_outcome admission (real apps/api + apps/files, PostgreSQL, S3)', () => {
  let api: ApiUnderTest;
  let files: AppProcess;
  let filesUrl: string;
  let key: string;
  let ws: HttpClient;
  let agent: string;
  let env: string;
  const s3 = freshBucketEnv('outcomeadmit');

  beforeAll(async () => {
    api = await startApi('outcomeadmit', { ...s3, MANGO_FILES_TEXT_MAX_BYTES: '64' });
    const started = await startFilesApp(api.db.url, s3);
    files = started.app;
    filesUrl = started.url;
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    agent = (await ws.post('/v1/agents', { name: 'writer', model: 'claude-sonnet-4-6' })).body.id;
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
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }
  const outcome = (rubric: unknown, extra: Record<string, unknown> = {}) => ({
    type: 'user.define_outcome',
    description: 'Summarize the report',
    rubric,
    ...extra,
  });
  const text = { type: 'text', content: 'Under 100 words, names the three risks.' };
  const count = async () =>
    Number((await api.sql<{ n: string }>('SELECT count(*) AS n FROM session_events'))[0]!.n);

  it('at creation: echoed with outc_ id, max_iterations and processed_at; the Session runs and has Work and an outbox row', async () => {
    const res = await ws.post('/v1/sessions', {
      agent,
      environment_id: env,
      initial_events: [outcome(text)],
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('running');
    expect(res.body.outcome_evaluations).toEqual([
      {
        type: 'outcome_evaluation',
        outcome_id: expect.stringMatching(/^outc_[0-9A-HJKMNP-TV-Z]{26}$/),
        description: 'Summarize the report',
        iteration: 0,
        result: 'pending',
        explanation: null,
        completed_at: null,
      },
    ]);
    const [echo] = (await ws.get(`/v1/sessions/${res.body.id}/events`)).body.data;
    expect(echo).toEqual({
      id: expect.stringMatching(/^sevt_/),
      type: 'user.define_outcome',
      description: 'Summarize the report',
      rubric: text,
      max_iterations: 3,
      outcome_id: res.body.outcome_evaluations[0].outcome_id,
      processed_at: expect.any(String),
    });
    const outbox = await api.sql<{ kind: string }>('SELECT kind FROM outbox WHERE session_id = $1', [
      res.body.id,
    ]);
    expect(outbox.map((o) => o.kind)).toEqual(['user.define_outcome']);
    const work = await api.sql<{ n: string }>('SELECT count(*) AS n FROM work_items WHERE session_id = $1', [
      res.body.id,
    ]);
    expect(Number(work[0]!.n)).toBe(1);
    // Listed Sessions carry it too.
    const listed = (await ws.get('/v1/sessions?limit=100')).body.data.find((s: any) => s.id === res.body.id);
    expect(listed.outcome_evaluations).toHaveLength(1);
  });

  it('later: an idle Session takes one (it starts work), and a second while the first is active is 409', async () => {
    const s = (await ws.post('/v1/sessions', { agent, environment_id: env })).body;
    expect(s.status).toBe('idle');
    expect(s.outcome_evaluations).toEqual([]);
    const res = await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [outcome(text, { max_iterations: 5 })],
    });
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toMatchObject({ type: 'user.define_outcome', max_iterations: 5 });
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.status).toBe('running');
    const before = await count();
    const again = await ws.post(`/v1/sessions/${s.id}/events`, { events: [outcome(text)] });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/still working on outcome outc_/);
    expect(await count()).toBe(before);
  });

  it('a File rubric is stored and echoed as its text (deleting the File later changes nothing)', async () => {
    const fileId = await upload('rubric.md', 'text/markdown', '# Rubric\nNames 3 risks.');
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: env,
        initial_events: [outcome({ type: 'file', file_id: fileId })],
      })
    ).body;
    const deleted = await fetch(`${filesUrl}/v1/files/${fileId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(deleted.status).toBe(200);
    const [echo] = (await ws.get(`/v1/sessions/${s.id}/events`)).body.data;
    expect(echo.rubric).toEqual({ type: 'text', content: '# Rubric\nNames 3 risks.' });
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    [
      'an image File rubric',
      async () => ({
        type: 'file',
        file_id: await upload(
          'pic.png',
          'image/png',
          new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        ),
      }),
      /image/i,
    ],
    [
      'a binary (non-UTF-8) File rubric',
      async () => ({
        type: 'file',
        file_id: await upload('b.bin', 'application/octet-stream', new Uint8Array([0x61, 0xff, 0xfe])),
      }),
      /UTF-8/,
    ],
    [
      'an oversized File rubric',
      async () => ({ type: 'file', file_id: await upload('big.txt', 'text/plain', 'x'.repeat(65)) }),
      /at most 64/,
    ],
    [
      'an empty File rubric',
      async () => ({ type: 'file', file_id: await upload('empty.txt', 'text/plain', '') }),
      /is empty/,
    ],
    [
      'an unknown File',
      async () => ({ type: 'file', file_id: 'file_01JD2Y3QX9V5M8K7R6T4W2P0ZZ' }),
      /not found/,
    ],
    [
      'a text rubric over 262,144 characters',
      async () => ({ type: 'text', content: 'x'.repeat(262_145) }),
      /rubric\.content/,
    ],
    ['an unknown rubric type', async () => ({ type: 'url', url: 'https://example.com' }), /rubric\.type/],
  ])('refuses %s with 400 and appends nothing, at creation and later', async (_name, rubric, message) => {
    const r = await rubric();
    const before = await count();
    const sessions = Number((await api.sql<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!.n);
    const created = await ws.post('/v1/sessions', {
      agent,
      environment_id: env,
      initial_events: [outcome(r)],
    });
    expect(created.status).toBe(400);
    expect(created.body.error.type).toBe('invalid_request_error');
    expect(created.body.error.message).toMatch(message);
    expect(Number((await api.sql<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!.n)).toBe(sessions);
    const s = (await ws.post('/v1/sessions', { agent, environment_id: env })).body;
    const later = await ws.post(`/v1/sessions/${s.id}/events`, { events: [outcome(r)] });
    expect(later.status).toBe(400);
    expect(later.body.error.message).toMatch(message);
    expect(await count()).toBe(before);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'two outcomes at creation',
      { initial_events: [outcome(text), outcome(text)] },
      /at most one user.define_outcome/,
    ],
    ['max_iterations 21', { initial_events: [outcome(text, { max_iterations: 21 })] }, /at most 20/],
    ['max_iterations 0', { initial_events: [outcome(text, { max_iterations: 0 })] }, /at least 1/],
    ['no description', { initial_events: [{ type: 'user.define_outcome', rubric: text }] }, /description/],
    ['a client outcome_id', { initial_events: [outcome(text, { outcome_id: 'outc_x' })] }, /outcome_id/],
  ])('refuses %s with 400', async (_name, body, message) => {
    const res = await ws.post('/v1/sessions', { agent, environment_id: env, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(message);
  });

  it('refuses two outcomes in one events request', async () => {
    const s = (await ws.post('/v1/sessions', { agent, environment_id: env })).body;
    const res = await ws.post(`/v1/sessions/${s.id}/events`, { events: [outcome(text), outcome(text)] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/at most one user.define_outcome per request/);
    expect((await ws.get(`/v1/sessions/${s.id}/events`)).body.data).toEqual([]);
  });
});
