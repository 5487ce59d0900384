import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { MangoClient, type ResponseInfo } from '@mango/sdk';
import { ResponseCutProxy } from '@mango/testing';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack, untilEvents } from './support';

const ROOT = join(__dirname, '../../..');

/**
 * Exactly-once writes through a real fault (docs/api-guide.md, "Idempotent requests"): a TCP proxy lets
 * the request through, lets the server answer, then cuts the connection after the response's headers —
 * the client never reads the body and sends the request again. With the Idempotency-Key every Mango SDK
 * sends (TypeScript, Python, Go) or a raw HTTP client repeating its key, the repeat replays the first
 * response: one Session, one `user.message`, one turn, one request to the (scripted) model.
 */
describe('retries after a lost response write once (real API, orchestrator, Temporal, scripted model, TCP cut)', () => {
  let stack: SessionStack;
  let proxy: ResponseCutProxy;
  let agent: string;
  let env: string;

  beforeAll(async () => {
    stack = await startSessionStack('idem-retries');
    stack.model.script(
      ...Array.from({ length: 200 }, () => ({ content: [{ type: 'text', text: 'Noted.' }] })),
    );
    proxy = await ResponseCutProxy.start(new URL(stack.api.url));
    agent = (await stack.ws.post('/v1/agents', { name: 'once', model: 'm' })).body.id;
    env = (await stack.ws.post('/v1/environments', { name: 'pool' })).body.id;
  }, STACK_TIMEOUT_MS);
  afterAll(async () => {
    await proxy?.close();
    await stack?.close();
  });

  const newSession = async (): Promise<string> =>
    (await stack.ws.post('/v1/sessions', { agent, environment_id: env })).body.id;
  const message = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

  /** Once the Session is idle after its last message: its messages, turns and model requests. */
  async function settled(sessionId: string, text: string) {
    const events = await untilEvents(stack.ws, sessionId, (l) => {
      const lastMessage = l.map((e) => e.type).lastIndexOf('user.message');
      return lastMessage >= 0 && l.slice(lastMessage).some((e) => e.type === 'session.status_idle');
    });
    return {
      messages: events.filter((e) => e.type === 'user.message').length,
      turns: events.filter((e) => e.type === 'session.status_idle').length,
      modelRequests: stack.model.requests.filter((r) => JSON.stringify(r.body).includes(text)).length,
    };
  }

  /** Runs one SDK program (Python, Go) against the proxy and returns its JSON line. */
  async function program(script: string, env: Record<string, string>) {
    const child = spawn('bash', ['-c', `. tools/sdk/ensure-tools.sh >&2 && ${script}`], {
      cwd: ROOT,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`exit ${code}:\n${err}\n${out}`);
    return JSON.parse(out.trim().split('\n').at(-1)!) as {
      events: number;
      replayed: boolean;
      request_id: string;
      idempotency_key: string;
    };
  }

  it('TypeScript SDK: events.send whose response is cut is retried with its key and replayed — one message, one turn, one model request', async () => {
    const id = await newSession();
    const seen: ResponseInfo[] = [];
    const client = new MangoClient({
      baseUrl: proxy.url,
      apiKey: stack.key,
      onResponse: (i) => seen.push(i),
    });
    const before = { cuts: proxy.cuts, sends: proxy.count(`/v1/sessions/${id}/events`) };
    proxy.cutNext(`POST /v1/sessions/${id}/events`);
    const sent = await client.sessions.events.send(id, { events: [message('ts once')] as never });
    expect(sent.data).toHaveLength(1);
    expect(proxy.cuts - before.cuts).toBe(1);
    expect(proxy.count(`/v1/sessions/${id}/events`) - before.sends).toBe(2);
    expect(seen.at(-1)).toMatchObject({ replayed: true, status: 200 });
    expect(await settled(id, 'ts once')).toEqual({ messages: 1, turns: 1, modelRequests: 1 });
  });

  it('Python SDK: the same cut, retried and replayed — one message, one turn, one model request', async () => {
    const id = await newSession();
    proxy.cutNext(`POST /v1/sessions/${id}/events`);
    const out = await program(
      'PYTHONPATH=libs/sdk/python "$SDK_PY" tools/sdk/conformance/python/send_event.py',
      {
        MANGO_BASE_URL: proxy.url,
        MANGO_API_KEY: stack.key,
        MANGO_SESSION_ID: id,
        MANGO_TEXT: 'py once',
      },
    );
    expect(out).toMatchObject({ events: 1, replayed: true });
    expect(proxy.count(`/v1/sessions/${id}/events`)).toBe(2);
    expect(await settled(id, 'py once')).toEqual({ messages: 1, turns: 1, modelRequests: 1 });
  });

  it('Go SDK: the same cut, retried and replayed — one message, one turn, one model request', async () => {
    const id = await newSession();
    proxy.cutNext(`POST /v1/sessions/${id}/events`);
    const out = await program(
      'cd tools/sdk/conformance/go && GOFLAGS="$GOFLAGS -mod=mod" "$SDK_GO" run ./sendevent',
      {
        MANGO_BASE_URL: proxy.url,
        MANGO_API_KEY: stack.key,
        MANGO_SESSION_ID: id,
        MANGO_TEXT: 'go once',
      },
    );
    expect(out).toMatchObject({ events: 1, replayed: true });
    expect(proxy.count(`/v1/sessions/${id}/events`)).toBe(2);
    expect(await settled(id, 'go once')).toEqual({ messages: 1, turns: 1, modelRequests: 1 });
  });

  /** A raw HTTP client: sends, loses the response to the cut, sends the same request again. */
  async function rawRepeat(
    path: string,
    body: unknown,
    key?: string,
  ): Promise<{ status: number; replayed: string | null; body: any }> {
    const init = {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.key}`,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body),
    };
    proxy.cutNext(`POST ${path}`);
    const lost = await fetch(proxy.url + path, init)
      .then((r) => r.text())
      .then(
        () => 'read',
        () => 'lost',
      );
    expect(lost).toBe('lost');
    const again = await fetch(proxy.url + path, init);
    return {
      status: again.status,
      replayed: again.headers.get('idempotent-replayed'),
      body: await again.json(),
    };
  }

  it('raw HTTP: sessions.create and events.send repeated with their key after a cut each write once', async () => {
    const before = Number((await stack.api.sql<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!.n);
    const created = await rawRepeat(
      '/v1/sessions',
      { agent, environment_id: env, title: 'raw' },
      'raw-create-1',
    );
    expect(created).toMatchObject({ status: 201, replayed: 'true' });
    const after = Number((await stack.api.sql<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!.n);
    expect(after - before).toBe(1);
    const id = created.body.id as string;
    const sent = await rawRepeat(
      `/v1/sessions/${id}/events`,
      { events: [message('raw once')] },
      'raw-send-1',
    );
    expect(sent).toMatchObject({ status: 200, replayed: 'true' });
    expect(await settled(id, 'raw once')).toEqual({ messages: 1, turns: 1, modelRequests: 1 });
  });

  it('16 concurrent events.send with one key append one message and run one turn', async () => {
    const id = await newSession();
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        fetch(`${stack.api.url}/v1/sessions/${id}/events`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${stack.key}`,
            'content-type': 'application/json',
            'idempotency-key': 'burst-send',
          },
          body: JSON.stringify({ events: [message('burst once')] }),
        }).then((r) => r.status),
      ),
    );
    expect(answers.every((s) => s === 200 || s === 409)).toBe(true);
    expect(await settled(id, 'burst once')).toEqual({ messages: 1, turns: 1, modelRequests: 1 });
    console.log(
      `16 concurrent events.send, one key: ${answers.filter((s) => s === 200).length} × 200, ${answers.filter((s) => s === 409).length} × 409; 1 user.message`,
    );
  });

  it('without a key the repeat after a cut writes twice (the defect the key removes)', async () => {
    const id = await newSession();
    const sent = await rawRepeat(`/v1/sessions/${id}/events`, { events: [message('raw twice')] });
    expect(sent.status).toBe(200);
    const outcome = await settled(id, 'raw twice');
    console.log(`events.send repeated after a cut without Idempotency-Key: ${JSON.stringify(outcome)}`);
    expect(outcome.messages).toBe(2);
  });
});
