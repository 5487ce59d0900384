import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DESYNC_PAYLOADS, E, legitimateRequests, rawRequest, S, W } from './desync-corpus.fixtures';
import { exchange, RawHttpClient } from './raw-http-client.fixtures';
import { RecordingUpstream } from './recording-upstream.fixtures';
import { MAX_BODY_BYTES } from './request-framing';
import { openWorkApiSocket, type WorkApiSocket } from './work-api-socket';

/**
 * The Work API socket as a hostile sandbox sees it (issue #34; docs/operator-guide.md "Sandbox network"):
 * the desynchronisation corpus written raw onto the socket must reach a recording upstream as nothing at
 * all, each refused locally in the error envelope before the connection closes; legitimate requests arrive
 * with exactly the bytes they declared; each socket has upstream connections of its own and bounded
 * concurrency and time. No container here: the sandbox test (work-api-socket-sandbox.int-spec.ts) writes
 * the same corpus from inside one.
 */
describe('the Work API socket (a strict proxy; raw bytes in, a recording upstream behind)', () => {
  let root: string;
  let upstream: RecordingUpstream;
  const opened: WorkApiSocket[] = [];
  const open = async (workId: string, limits?: Parameters<typeof openWorkApiSocket>[0]['limits']) => {
    const s = await openWorkApiSocket({ root, workId, upstream: upstream.url, limits });
    opened.push(s);
    return { ...s, path: join(s.dir, 'api.sock') };
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mango-socket-int-'));
    upstream = await new RecordingUpstream().start();
  });
  afterEach(() => {
    upstream.release();
    upstream.respond(
      () => false,
      () => undefined,
    );
  });
  afterAll(async () => {
    for (const s of opened) await s.close();
    await upstream.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('every desynchronisation payload is refused locally and nothing of it is forwarded', () => {
    let path: string;
    beforeAll(async () => (path = (await open('work_corpus')).path));

    it.each(DESYNC_PAYLOADS.map((p) => [p.family, p.name, p] as const))('%s %s', async (_f, _n, p) => {
      const before = upstream.requests.length;
      const answers = await exchange(path, p.raw);
      expect(upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([]);
      expect(answers.map((a) => a.status)).toEqual([p.status]);
      expect(answers[0]!.headers['content-type']).toBe('application/json');
      // The envelope (an answer to HEAD has no body).
      for (const body of answers.map((a) => a.body).filter((b) => b !== ''))
        expect(JSON.parse(body)).toMatchObject({
          type: 'error',
          error: { type: expect.any(String), message: expect.any(String) },
          request_id: expect.stringMatching(/^req_/),
        });
    });
  });

  it('legitimate requests arrive exactly as declared: the method, the path and the body bytes', async () => {
    const { path } = await open('work_legit');
    for (const r of legitimateRequests('legit')) {
      const before = upstream.requests.length;
      const answers = await exchange(path, rawRequest(r, 'wrk_token'));
      expect(answers.map((a) => a.status)).toEqual([200]);
      const sent = Buffer.from(r.body, 'utf8').toString('latin1');
      expect(JSON.parse(answers[0]!.body)).toMatchObject({ method: r.method, url: r.path, body: sent });
      const got = upstream.requests.slice(before);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ method: r.method, url: r.path, body: sent });
      expect(got[0]!.headers.authorization).toBe('Bearer wrk_token');
      expect(got[0]!.headers['transfer-encoding']).toBeUndefined();
      if (r.method === 'POST')
        expect(got[0]!.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
    }
  });

  it('a kept-alive connection serves one request after another, each answered before the next is sent', async () => {
    const { path } = await open('work_keepalive');
    const c = new RawHttpClient(path);
    const before = upstream.requests.length;
    for (const r of legitimateRequests('kept')) {
      await c.write(rawRequest(r, 'wrk_token', true));
      const a = await c.next();
      expect(a).toMatchObject({ status: 200 });
      expect(JSON.parse(a!.body)).toMatchObject({ method: r.method, url: r.path });
    }
    c.destroy();
    expect(upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual(
      legitimateRequests('kept').map((r) => `${r.method} ${r.path}`),
    );
  });

  it('a body up to the cap is forwarded whole; one byte over is 413 and nothing leaves', async () => {
    const { path } = await open('work_cap');
    const r = { method: 'POST' as const, path: `/v1/sessions/${S}/events`, body: 'x'.repeat(MAX_BODY_BYTES) };
    const before = upstream.requests.length;
    expect((await exchange(path, rawRequest(r, 'wrk_token'))).map((a) => a.status)).toEqual([200]);
    expect(upstream.requests.slice(before).map((x) => x.body.length)).toEqual([MAX_BODY_BYTES]);
    const over = await exchange(path, rawRequest({ ...r, body: `${r.body}x` }, 'wrk_token'));
    expect(over.map((a) => [a.status, JSON.parse(a.body).error.type])).toEqual([[413, 'request_too_large']]);
    expect(upstream.requests.slice(before + 1)).toEqual([]);
  });

  it('bytes sent after a request, before its answer, are refused and close the connection', async () => {
    const { path } = await open('work_pipeline');
    const first = `/v1/sessions/${S}?held=1`;
    upstream.hold((r) => r.url === first);
    const before = upstream.requests.length;
    const c = new RawHttpClient(path);
    await c.write(rawRequest({ method: 'GET', path: first, body: '' }, 'wrk_token', true));
    await upstream.until(() => upstream.requests.some((r) => r.url === first));
    await c.write(
      rawRequest({ method: 'GET', path: `/v1/sessions/${S}/events?second=1`, body: '' }, 'wrk_token', true),
    );
    // The bytes are in the socket's queue: the next poll phase parses them, before this check phase's release.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    upstream.release();
    const answers = await c.all();
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect(JSON.parse(answers[1]!.body).error.message).toMatch(/pipelined/);
    expect(c.ended).toBe(true);
    expect(upstream.requests.slice(before).map((r) => r.url)).toEqual([first]);
  });

  it('each socket has upstream connections of its own, closed with it', async () => {
    const a = await open('work_pool_a');
    const b = await open('work_pool_b');
    const before = upstream.requests.length;
    const send = async (path: string, tag: string, i: number) => {
      const c = new RawHttpClient(path);
      await c.write(
        rawRequest({ method: 'GET', path: `/v1/sessions/${S}?${tag}=${i}`, body: '' }, `wrk_${tag}`, true),
      );
      const answer = await c.next();
      c.destroy();
      return answer;
    };
    // Interleaved and concurrent: with one shared pool, some requests of A and B would share a connection.
    for (let round = 0; round < 4; round++)
      await Promise.all([0, 1, 2].flatMap((i) => [send(a.path, 'a', i), send(b.path, 'b', i)]));
    const got = upstream.requests.slice(before);
    const of = (tag: string) =>
      new Set(got.filter((r) => r.url.includes(`?${tag}=`)).map((r) => r.connection));
    expect(got).toHaveLength(24);
    expect([...of('a')].filter((p) => of('b').has(p))).toEqual([]);
    await a.close();
    await upstream.until(() => [...of('a')].every((p) => !upstream.connections.get(p)!.open));
    expect([...of('b')].some((p) => upstream.connections.get(p)!.open)).toBe(true);
  });

  it('a socket accepts at most maxConnections connections at once', async () => {
    const { path } = await open('work_conns', { maxConnections: 3 });
    upstream.hold((r) => r.url.includes('conns='));
    const clients = [0, 1, 2].map((i) => {
      const c = new RawHttpClient(path);
      void c.write(
        rawRequest({ method: 'GET', path: `/v1/sessions/${S}?conns=${i}`, body: '' }, 'wrk_token'),
      );
      return c;
    });
    await upstream.until(() => upstream.requests.filter((r) => r.url.includes('conns=')).length === 3);
    const fourth = new RawHttpClient(path);
    await fourth.write(
      rawRequest({ method: 'GET', path: `/v1/sessions/${S}?conns=3`, body: '' }, 'wrk_token'),
    );
    expect(await fourth.all()).toEqual([]);
    upstream.release();
    for (const c of clients) expect((await c.all()).map((a) => a.status)).toEqual([200]);
    expect(upstream.requests.filter((r) => r.url.includes('conns=3'))).toEqual([]);
  });

  it('an upstream that does not answer within the deadline gets 504; one that stalls its body is cut', async () => {
    const { path } = await open('work_deadline', { deadlineMs: 200 });
    upstream.hold((r) => r.url.includes('silent=1'));
    const silent = await exchange(
      path,
      rawRequest({ method: 'GET', path: `/v1/sessions/${S}?silent=1`, body: '' }, 'wrk_token'),
    );
    expect(silent.map((a) => [a.status, JSON.parse(a.body).error.type])).toEqual([[504, 'api_error']]);
    upstream.release();
    upstream.stall((r) => r.url.includes('stall=1'));
    const c = new RawHttpClient(path);
    await c.write(rawRequest({ method: 'GET', path: `/v1/sessions/${S}?stall=1`, body: '' }, 'wrk_token'));
    // The headers came, then the connection was cut before the end of the body.
    const cut = await c.all();
    expect(
      cut.map((a) => [a.status, Buffer.byteLength(a.body) < Number(a.headers['content-length'])]),
    ).toEqual([[200, true]]);
    expect(c.ended).toBe(true);
    upstream.stall(() => false);
  });

  describe('long answers: the event stream and a Skill archive have the long deadline, every answer the idle bound', () => {
    const pings = (count: number) => (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      const tick = () => {
        res.write('event: ping\ndata: {}\n\n');
        if (++sent < count) setTimeout(tick, 30);
        else res.end();
      };
      tick();
    };
    const stream = `/v1/sessions/${S}/events/stream`;
    const read = async (path: string, target: string) => {
      const c = new RawHttpClient(path);
      await c.write(rawRequest({ method: 'GET', path: target, body: '' }, 'wrk_token'));
      await c.closed;
      return { pings: c.received.split('event: ping').length - 1, ended: c.received.endsWith('0\r\n\r\n') };
    };

    it('a stream that keeps sending outlives the (short) deadline and ends cleanly', async () => {
      const { path } = await open('work_stream_long', { deadlineMs: 100, idleMs: 5_000 });
      upstream.respond((r) => r.url.startsWith(`${stream}?ten=`), pings(10)); // at least 270 ms
      expect(await read(path, `${stream}?ten=1`)).toEqual({ pings: 10, ended: true });
    });

    it('the same answer on an ordinary route is cut at the deadline', async () => {
      const { path } = await open('work_ordinary_long', { deadlineMs: 100, idleMs: 5_000 });
      upstream.respond((r) => r.url.startsWith(`/v1/sessions/${S}?ten=`), pings(10));
      const got = await read(path, `/v1/sessions/${S}?ten=1`);
      expect(got.ended).toBe(false);
      expect(got.pings).toBeLessThan(10);
    });

    it('a stream that goes silent is cut after the idle bound', async () => {
      const { path } = await open('work_stream_idle', { idleMs: 200 });
      // One ping, then nothing.
      upstream.respond(
        (r) => r.url.startsWith(`${stream}?silent=`),
        (res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('event: ping\ndata: {}\n\n');
        },
      );
      expect(await read(path, `${stream}?silent=1`)).toEqual({ pings: 1, ended: false });
    });
  });

  it('a request whose body does not arrive in time is answered 408 and nothing is forwarded', async () => {
    const { path } = await open('work_slow_body', { requestBodyMs: 200 });
    const before = upstream.requests.length;
    const c = new RawHttpClient(path);
    const head = rawRequest(
      { method: 'POST', path: `/v1/environments/${E}/work/${W}/heartbeat`, body: '{}' },
      't',
    );
    await c.write(head.slice(0, -1)); // the last byte of the body never comes
    expect((await c.all()).map((a) => a.status)).toEqual([408]);
    expect(upstream.requests.slice(before)).toEqual([]);
  });
});
