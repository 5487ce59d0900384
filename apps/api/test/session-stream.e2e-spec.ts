import { answers, freePort, httpClient, HttpClient, startApp } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

interface Frame {
  id?: string;
  event?: string;
  data?: any;
}

/** Reads SSE frames from a real HTTP response until `until` says stop (or the stream ends). */
async function readFrames(
  url: string,
  key: string,
  headers: Record<string, string>,
  until: (frames: Frame[]) => boolean,
  onOpen?: () => Promise<void>,
) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: controller.signal,
  });
  const frames: Frame[] = [];
  if (res.status !== 200) return { status: res.status, frames, body: await res.json() };
  const reader = res.body!.getReader();
  let buffer = '';
  let opened = false;
  for (;;) {
    if (!opened && onOpen) {
      opened = true;
      void onOpen();
    }
    const { value, done } = await reader.read();
    if (done) break;
    buffer += Buffer.from(value).toString('utf8');
    let idx: number;
    while ((idx = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, idx);
      buffer = buffer.slice(idx + 2);
      const frame: Frame = {};
      for (const line of raw.split('\n')) {
        const [k, ...rest] = line.split(': ');
        const v = rest.join(': ');
        if (k === 'id') frame.id = v;
        if (k === 'event') frame.event = v;
        if (k === 'data') frame.data = JSON.parse(v);
      }
      if (frame.event !== 'ping') frames.push(frame);
    }
    if (until(frames)) {
      controller.abort();
      break;
    }
  }
  return { status: 200, frames, contentType: res.headers.get('content-type') };
}

describe('Session SSE streams with resume (real apps/api process)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let key: string;
  let sessionId: string;
  const message = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

  beforeAll(async () => {
    api = await startApi('stream');
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await ws.post('/v1/environments', { name: 'e' })).body.id;
    sessionId = (
      await ws.post('/v1/sessions', { agent, environment_id: env, initial_events: [message('one')] })
    ).body.id;
  });
  afterAll(() => api.close());

  const url = () => `${api.url}/v1/sessions/${sessionId}/events/stream`;

  it('replays history and then delivers live events, each frame carrying its sequence as id', async () => {
    const { frames, contentType } = await readFrames(
      url(),
      key,
      {},
      (f) => f.length >= 3,
      async () => {
        await new Promise((r) => setTimeout(r, 200));
        await ws.post(`/v1/sessions/${sessionId}/events`, { events: [message('two'), message('three')] });
      },
    );
    expect(contentType).toMatch(/text\/event-stream/);
    expect(frames.map((f) => f.id)).toEqual(['1', '2', '3']);
    expect(frames.map((f) => f.data.content[0].text)).toEqual(['one', 'two', 'three']);
    expect(frames.every((f) => f.event === f.data.type)).toBe(true);
  });

  it('Last-Event-ID (header or query) resumes with no gap and no duplicate', async () => {
    await ws.post(`/v1/sessions/${sessionId}/events`, { events: [message('four'), message('five')] });
    const byHeader = await readFrames(url(), key, { 'Last-Event-ID': '3' }, (f) => f.length >= 2);
    expect(byHeader.frames.map((f) => f.id)).toEqual(['4', '5']);
    const byQuery = await readFrames(`${url()}?last_event_id=4`, key, {}, (f) => f.length >= 1);
    expect(byQuery.frames.map((f) => f.id)).toEqual(['5']);
  });

  it('many concurrent writers: a resumed reader sees every sequence exactly once, in order', async () => {
    const writes = Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ws.post(`/v1/sessions/${sessionId}/events`, { events: [message(`c${i}`)] }),
      ),
    );
    const first = await readFrames(url(), key, { 'Last-Event-ID': '5' }, (f) => f.length >= 10);
    // Every append is accepted (a refused one would leave the reader below waiting for a sequence that
    // never comes): said here, with the refusals' bodies, rather than as a timeout.
    const refused = (await writes).filter((r) => r.status !== 200).map((r) => [r.status, r.body]);
    expect(refused).toEqual([]);
    const rest = await readFrames(
      url(),
      key,
      { 'Last-Event-ID': first.frames.at(-1)!.id! },
      (f) => Number(f.at(-1)?.id ?? 0) >= 35,
    );
    const ids = [...first.frames, ...rest.frames].map((f) => Number(f.id));
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i + 6));
  });

  it('streams of one Session at different positions share its reader and each get exactly their sequences', async () => {
    // A stream joining while the Session's reader is mid-read must not skip rows below that read.
    await ws.post(`/v1/sessions/${sessionId}/events`, {
      events: [message('p1'), message('p2'), message('p3')],
    });
    const base = (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data.length;
    const target = base + 20;
    const readers = ['0', String(base - 3), String(base)].map((from) =>
      readFrames(url(), key, { 'Last-Event-ID': from }, (f) => Number(f.at(-1)?.id ?? 0) >= target),
    );
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ws.post(`/v1/sessions/${sessionId}/events`, { events: [message(`s${i}`)] }),
      ),
    );
    const [all, near, live] = await Promise.all(readers);
    const seqs = (r: typeof all) => r.frames.map((f) => Number(f.id));
    const range = (from: number) => Array.from({ length: target - from }, (_, i) => from + 1 + i);
    expect(seqs(all)).toEqual(range(0));
    expect(seqs(near)).toEqual(range(base - 3));
    expect(seqs(live)).toEqual(range(base));
  });

  it('ends after session.deleted', async () => {
    const last = (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data.length;
    const { frames } = await readFrames(
      url(),
      key,
      { 'Last-Event-ID': String(last) },
      () => false,
      async () => {
        await new Promise((r) => setTimeout(r, 200));
        await ws.delete(`/v1/sessions/${sessionId}`);
      },
    );
    expect(frames.map((f) => f.event)).toEqual(['session.deleted']);
  });

  it('rejects a malformed Last-Event-ID and unknown sessions with the envelope', async () => {
    const other = (
      await ws.post('/v1/sessions', {
        agent: (await ws.post('/v1/agents', { name: 'b', model: 'm' })).body.id,
        environment_id: (await ws.post('/v1/environments', { name: 'f' })).body.id,
      })
    ).body.id;
    const bad = await readFrames(
      `${api.url}/v1/sessions/${other}/events/stream`,
      key,
      { 'Last-Event-ID': 'sevt_x' },
      () => true,
    );
    expect(bad.status).toBe(400);
    const missing = await readFrames(
      `${api.url}/v1/sessions/sesn_01JD2Y3QX9V5M8K7R6T4W2P0ZZ/events/stream`,
      key,
      {},
      () => true,
    );
    expect(missing.status).toBe(404);
  });
});

describe("a Work token's stream lives only as long as its lease", () => {
  it('after Stop the open stream gets an error frame and ends; a new stream is refused', async () => {
    const api = await startApi('streamtoken');
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
      const env = (await ws.post('/v1/environments', { name: 'e' })).body.id;
      const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', env)).api_key);
      const session = (
        await ws.post('/v1/sessions', {
          agent,
          environment_id: env,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
        })
      ).body.id;
      const polled = await supervisor.get(`/v1/environments/${env}/work/poll?block_ms=5000`);
      await supervisor.post(`/v1/environments/${env}/work/${polled.body.id}/ack`);
      const token = JSON.parse(Buffer.from(polled.body.secret, 'base64url').toString()).sessions_token;
      const worker = httpClient(api.url, token);
      await worker.post(
        `/v1/environments/${env}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
      );
      const { frames } = await readFrames(
        `${api.url}/v1/sessions/${session}/events/stream`,
        token,
        {},
        () => false, // read until the server ends the stream
        async () => {
          await new Promise((r) => setTimeout(r, 300));
          await ws.post(`/v1/environments/${env}/work/${polled.body.id}/stop`, { force: true });
        },
      );
      expect(frames.map((f) => f.event)).toEqual(['user.message', 'error']);
      expect(frames[1]!.data.error).toMatchObject({ type: 'authentication_error' });
      const again = await readFrames(
        `${api.url}/v1/sessions/${session}/events/stream`,
        token,
        {},
        () => true,
      );
      expect(again.status).toBe(401);
    } finally {
      await api.close();
    }
  }, 60_000);
});

describe('stream resume across an API crash (kill -9, real processes)', () => {
  it('a client reconnecting to a new API process with Last-Event-ID loses and duplicates nothing', async () => {
    const api = await startApi('streamcrash');
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const ws = httpClient(api.url, key);
    const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await ws.post('/v1/environments', { name: 'e' })).body.id;
    const session = (await ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
    const send = (c: HttpClient, i: number) =>
      c.post(`/v1/sessions/${session}/events`, {
        events: [{ type: 'user.message', content: [{ type: 'text', text: `m${i}` }] }],
      });
    for (let i = 1; i <= 5; i++) await send(ws, i);
    const before = await readFrames(
      `${api.url}/v1/sessions/${session}/events/stream`,
      key,
      {},
      (f) => f.length >= 3,
    );
    // However many frames arrived before the crash, they are a prefix of the log.
    expect(before.frames.map((f) => Number(f.id))).toEqual(before.frames.map((_, i) => i + 1));

    expect(await api.app.stop('SIGKILL')).toBeNull();
    const port = await freePort();
    const second = await startApp(
      'apps/api/src/main.ts',
      { MANGO_DATABASE_URL: api.db.url, MANGO_API_PORT: String(port), MANGO_LOG_LEVEL: 'warn' },
      answers(`http://127.0.0.1:${port}/healthz`),
    );
    try {
      const ws2 = httpClient(`http://127.0.0.1:${port}`, key);
      for (let i = 6; i <= 8; i++) await send(ws2, i);
      const after = await readFrames(
        `http://127.0.0.1:${port}/v1/sessions/${session}/events/stream`,
        key,
        { 'Last-Event-ID': before.frames.at(-1)!.id! },
        (f) => Number(f.at(-1)?.id ?? 0) >= 8,
      );
      const all = [...before.frames, ...after.frames];
      expect(all.map((f) => Number(f.id))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(all.map((f) => f.data.content[0].text)).toEqual([
        'm1',
        'm2',
        'm3',
        'm4',
        'm5',
        'm6',
        'm7',
        'm8',
      ]);
    } finally {
      await second.stop();
      await api.db.drop();
    }
  });
});

describe('graceful shutdown with open streams', () => {
  it('SIGTERM ends open streams and the API exits 0 promptly', async () => {
    const api = await startApi('streamstop');
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const ws = httpClient(api.url, key);
    const agent = (await ws.post('/v1/agents', { name: 'a', model: 'm' })).body.id;
    const env = (await ws.post('/v1/environments', { name: 'e' })).body.id;
    const session = (await ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
    const open = readFrames(`${api.url}/v1/sessions/${session}/events/stream`, key, {}, () => false);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    expect(await api.app.stop('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    await open;
    await api.db.drop();
  });
});
