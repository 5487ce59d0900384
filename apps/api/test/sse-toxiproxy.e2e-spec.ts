import { request, IncomingMessage } from 'node:http';
import { MangoClient } from '@mango/sdk';
import { httpClient, HttpClient, startToxiproxy, Toxiproxy, ToxiproxyLink } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Session streams through a real TCP fault proxy (Toxiproxy, built from its Go module) between the client
 * and apps/api: connections cut mid-headers and mid-frame before the client ever saw an id, cut
 * repeatedly while events are written, under latency and with every frame sliced into small TCP
 * segments. A client that reconnects with `Last-Event-ID` (none before its first id) receives every
 * event of the Session exactly once, in order, and the stream ends after `session.deleted`.
 */

interface Frame {
  id?: string;
  event?: string;
  data: string;
}

/**
 * A plain SSE client that does no de-duplication of its own (unlike the SDK), so a duplicate from the
 * server would show. It dispatches a frame only at its blank line (a cut frame is never seen) and
 * reconnects 50 ms after any close or error, with `Last-Event-ID` once it has one.
 */
class ResumingClient {
  readonly dispatched: Frame[] = [];
  connections = 0;
  /** Connections that ended before dispatching any frame with an id. */
  cutBeforeAnId = 0;
  private lastId: string | undefined;
  private current?: IncomingMessage;
  private ended!: () => void;
  readonly done = new Promise<void>((resolve) => (this.ended = resolve));
  private finished = false;

  constructor(
    private readonly base: string,
    private readonly path: string,
    private readonly credential: string,
  ) {}

  start(): void {
    this.connect();
  }

  private connect(): void {
    if (this.finished) return;
    this.connections++;
    let sawId = false;
    let buffer = '';
    let frame: Frame = { data: '' };
    let hasData = false;
    let retried = false;
    const retry = () => {
      if (retried || this.finished) return;
      retried = true;
      if (!sawId) this.cutBeforeAnId++;
      setTimeout(() => this.connect(), 50);
    };
    const headers: Record<string, string> = { authorization: `Bearer ${this.credential}` };
    if (this.lastId !== undefined) headers['last-event-id'] = this.lastId;
    const req = request(`${this.base}${this.path}`, { headers }, (res) => {
      this.current = res;
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', retry);
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (hasData) {
              if (frame.event !== 'ping') this.dispatched.push(frame);
              if (frame.id !== undefined) {
                this.lastId = frame.id;
                sawId = true;
              }
              if (frame.event === 'session.deleted') {
                this.finished = true;
                res.destroy();
                this.ended();
              }
            }
            frame = { data: '' };
            hasData = false;
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') frame.id = value;
          else if (field === 'event') frame.event = value;
          else if (field === 'data') {
            frame.data = hasData ? `${frame.data}\n${value}` : value;
            hasData = true;
          }
        }
      });
      res.on('close', retry);
      res.on('error', () => undefined);
    });
    req.on('error', retry);
    req.end();
  }

  stop(): void {
    this.finished = true;
    this.current?.destroy();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('Session streams through a TCP fault proxy (Toxiproxy): every event exactly once', () => {
  let api: ApiUnderTest;
  let http: HttpClient;
  let key: string;
  let toxiproxy: Toxiproxy;
  let agentId: string;
  let envId: string;
  const message = (text: string) => ({
    events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
  });

  beforeAll(async () => {
    api = await startApi('ssetoxi');
    key = (await api.issueKey('wrkspc_default')).api_key;
    http = httpClient(api.url, key);
    agentId = (await http.post('/v1/agents', { name: 'sse', model: 'claude-sonnet-4-6' })).body.id;
    envId = (await http.post('/v1/environments', { name: 'sse' })).body.id;
    toxiproxy = await startToxiproxy();
  }, 120_000);
  afterAll(async () => {
    await toxiproxy?.stop();
    await api?.close();
  });

  /** The bytes of a stream's response head, as apps/api sends it (constant length). */
  async function headLength(path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
        const head = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n${res.rawHeaders
          .map((v, i) => (i % 2 === 0 ? `${v}: ` : `${v}\r\n`))
          .join('')}\r\n`;
        res.destroy();
        resolve(Buffer.byteLength(head));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function expectExactlyOnce(client: ResumingClient, sessionId: string): Promise<void> {
    const log = await api.sql<{ seq: string; type: string }>(
      'SELECT e.seq::text AS seq, e.type FROM session_events e WHERE e.session_id = $1 ORDER BY e.seq',
      [sessionId],
    );
    expect(log.length).toBeGreaterThan(0);
    expect(log[log.length - 1]!.type).toBe('session.deleted');
    expect(client.dispatched.map((f) => `${f.id} ${f.event}`)).toEqual(log.map((r) => `${r.seq} ${r.type}`));
    for (const f of client.dispatched) expect(JSON.parse(f.data).type).toBe(f.event);
  }

  it.each([
    ['mid-headers', (head: number) => Math.floor(head / 2)],
    ['mid-first-frame, after its id line', (head: number) => head + 12],
  ])(
    'a cut before the first id (%s): the client reconnects without Last-Event-ID and misses nothing',
    async (_name, cutAt) => {
      const session = (
        await http.post('/v1/sessions', {
          agent: agentId,
          environment_id: envId,
          initial_events: message('first').events,
        })
      ).body;
      const path = `/v1/sessions/${session.id}/events/stream`;
      const link: ToxiproxyLink = await toxiproxy.link(`cut-${session.id}`, api.url.replace('http://', ''));
      const head = await headLength(path);
      await link.addToxic({
        name: 'cut',
        type: 'limit_data',
        stream: 'downstream',
        attributes: { bytes: cutAt(head) },
      });
      const client = new ResumingClient(link.url, path, key);
      client.start();
      await until('the first cut connection', () => client.connections >= 2);
      expect(client.dispatched).toEqual([]);
      expect(client.cutBeforeAnId).toBeGreaterThanOrEqual(1);
      await link.removeToxic('cut');
      for (let i = 0; i < 5; i++)
        expect((await http.post(`/v1/sessions/${session.id}/events`, message(`m${i}`))).status).toBe(200);
      await until(
        'five messages streamed',
        () => client.dispatched.filter((f) => f.event === 'user.message').length >= 6,
      );
      expect((await http.delete(`/v1/sessions/${session.id}`)).status).toBe(200);
      await client.done;
      await expectExactlyOnce(client, session.id);
    },
    60_000,
  );

  it('repeated cuts while events are written, under latency and sliced TCP segments: gapless, no duplicate', async () => {
    const session = (await http.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    const path = `/v1/sessions/${session.id}/events/stream`;
    const link = await toxiproxy.link(`storm-${session.id}`, api.url.replace('http://', ''));
    const head = await headLength(path);
    await link.addToxic({
      name: 'latency',
      type: 'latency',
      stream: 'downstream',
      attributes: { latency: 120, jitter: 80 },
    });
    await link.addToxic({
      name: 'slicer',
      type: 'slicer',
      stream: 'downstream',
      attributes: { average_size: 24, size_variation: 16, delay: 200 },
    });
    const client = new ResumingClient(link.url, path, key);
    client.start();

    // A writer posts 40 messages while the link is cut every ~400 ms and, for a while, every
    // connection is cut after a few hundred bytes (mid-frame).
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 40; i++) {
        expect((await http.post(`/v1/sessions/${session.id}/events`, message(`storm ${i}`))).status).toBe(
          200,
        );
        await sleep(40);
      }
      writing = false;
    })();
    let cuts = 0;
    while (writing) {
      await sleep(300 + Math.floor(Math.random() * 200));
      await link.setEnabled(false);
      cuts++;
      await sleep(100);
      await link.setEnabled(true);
      if (cuts === 3)
        await link.addToxic({
          name: 'short',
          type: 'limit_data',
          stream: 'downstream',
          attributes: { bytes: head + 700 },
        });
      if (cuts === 8) await link.removeToxic('short');
    }
    await writer;
    if (cuts < 8) await link.removeToxic('short').catch(() => undefined);
    await until(
      'all 40 messages streamed',
      () => client.dispatched.filter((f) => f.event === 'user.message').length >= 40,
      60_000,
    );
    expect((await http.delete(`/v1/sessions/${session.id}`)).status).toBe(200);
    await client.done;
    client.stop();
    process.stdout.write(
      `[sse-toxiproxy] ${cuts} cuts, ${client.connections} connections, ${client.cutBeforeAnId} without an id, ${client.dispatched.length} events\n`,
    );
    expect(cuts).toBeGreaterThanOrEqual(3);
    expect(client.connections).toBeGreaterThan(cuts);
    await expectExactlyOnce(client, session.id);
  }, 180_000);
  it('the TypeScript SDK stream through the same cuts and latency yields the log once, in order', async () => {
    const session = (await http.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    const link = await toxiproxy.link(`sdk-${session.id}`, api.url.replace('http://', ''));
    await link.addToxic({
      name: 'latency',
      type: 'latency',
      stream: 'downstream',
      attributes: { latency: 80, jitter: 60 },
    });
    const sdk = new MangoClient({ baseUrl: link.url, apiKey: key, maxRetries: 20 });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const { id, event } of sdk.sessions.events.stream(session.id))
        seen.push(`${id} ${event.type}`);
    })();
    let cuts = 0;
    for (let i = 0; i < 20; i++) {
      expect((await http.post(`/v1/sessions/${session.id}/events`, message(`sdk ${i}`))).status).toBe(200);
      if (i % 4 === 1) {
        await link.setEnabled(false);
        cuts++;
        await sleep(100);
        await link.setEnabled(true);
      }
    }
    await until(
      '20 messages through the SDK',
      () => seen.filter((s) => s.endsWith(' user.message')).length >= 20,
      60_000,
    );
    expect((await http.delete(`/v1/sessions/${session.id}`)).status).toBe(200);
    await reading;
    const log = await api.sql<{ seq: string; type: string }>(
      'SELECT e.seq::text AS seq, e.type FROM session_events e WHERE e.session_id = $1 ORDER BY e.seq',
      [session.id],
    );
    expect(cuts).toBe(5);
    expect(seen).toEqual(log.map((r) => `${r.seq} ${r.type}`));
  }, 120_000);
});
