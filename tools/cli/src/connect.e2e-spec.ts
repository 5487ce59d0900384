import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiUnderTest,
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  ScriptedModelServer,
  startApi,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';

const ROOT = join(__dirname, '../../..');

/**
 * A real TCP hop between the CLI and apps/api, so the test can cut the stream (`down`: every connection
 * destroyed, new ones refused) or make a write uncertain (`dropWrites`: a POST reaches the API but its
 * connection is destroyed before the response gets back).
 */
async function startCutProxy(target: number) {
  const sockets = new Set<Socket>();
  let mode: 'pass' | 'dropWrites' = 'pass';
  let server: Server | undefined;
  const port = await freePort();
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection(target, '127.0.0.1');
        sockets.add(client).add(upstream);
        let dropping = false;
        client.on('data', (d) => {
          if (mode === 'dropWrites' && d.subarray(0, 5).toString() === 'POST ') dropping = true;
          upstream.write(d);
        });
        upstream.on('data', (d) => (dropping ? client.destroy() : client.write(d)));
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('close', end).on('error', end);
        upstream.on('close', end).on('error', end);
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    down: async () => {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      sockets.clear();
    },
    up: listen,
    dropWrites: () => (mode = 'dropWrites'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

/** One tmux server of this test's own (its own socket), one window running the CLI. */
function tmux(socket: string) {
  const run = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  return {
    start: (cwd: string, command: string) =>
      run('new-session', '-d', '-s', 'cli', '-x', '200', '-y', '50', '-c', cwd, command),
    type: (text: string) => {
      run('send-keys', '-t', 'cli', '-l', text);
      run('send-keys', '-t', 'cli', 'Enter');
    },
    key: (key: string) => run('send-keys', '-t', 'cli', key),
    screen: () => run('capture-pane', '-p', '-J', '-t', 'cli', '-S', '-1000'),
    kill: () => {
      try {
        run('kill-server');
      } catch {
        // already gone
      }
    },
  };
}

/**
 * `mango sessions connect` in a real terminal (tmux send-keys / capture-pane) against real apps/api,
 * apps/orchestrator, Temporal and the scripted model: history, a message and its live answer, an approval
 * answered from the terminal, an interrupt with Ctrl-C, a reconnect after the stream is cut (history
 * reconciled), and an uncertain write that stops without retry.
 */
describe('mango sessions connect in tmux (real API, orchestrator, Temporal, scripted model)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let key: string;
  let envId: string;
  let proxy: Awaited<ReturnType<typeof startCutProxy>>;
  let dir: string;
  const term = tmux(`mango-connect-${process.pid}`);

  beforeAll(async () => {
    api = await startApi('connect');
    model = await startScriptedModel();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `connect-${Date.now()}`,
      modelUrl: model.url,
    });
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    proxy = await startCutProxy(Number(new URL(api.url).port));
    // The CLI finds the API and the Workspace key in .mango/local.env, as `npm run up` writes it.
    dir = mkdtempSync(join(tmpdir(), 'mango-connect-'));
    mkdirSync(join(dir, '.mango'));
    writeFileSync(join(dir, '.mango/local.env'), `MANGO_BASE_URL=${proxy.url}\nMANGO_API_KEY=${key}\n`);
  }, 180_000);

  afterAll(async () => {
    term.kill();
    await proxy?.close();
    await orchestrator?.stop();
    await model?.close();
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function screenUntil(ok: (screen: string) => boolean, label: string, ms = 30_000): Promise<string> {
    const deadline = Date.now() + ms;
    let screen = '';
    while (Date.now() < deadline) {
      screen = term.screen();
      if (ok(screen)) return screen;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`${label}: the terminal shows\n${screen}`);
  }
  const shows = (text: string | RegExp) => (s: string) =>
    typeof text === 'string' ? s.includes(text) : text.test(s);
  const count = (screen: string, text: string) => screen.split(text).length - 1;
  const events = async (sessionId: string) =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Array<Record<string, any>>;

  it('follows, messages, approves, interrupts, reconnects after a cut and stops after an uncertain write', async () => {
    model.script({ content: [{ type: 'text', text: 'Hello from the model.' }] });
    const agent = (
      await ws.post('/v1/agents', {
        name: 'careful',
        model: 'm',
        tools: [
          {
            type: 'agent_toolset_20260401',
            configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
          },
        ],
      })
    ).body.id;
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        title: 'tmux',
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi there' }] }],
      })
    ).body;
    for (let i = 0; i < 300 && !(await events(s.id)).some((e) => e.type === 'session.status_idle'); i++)
      await new Promise((r) => setTimeout(r, 100));

    // Credentials from .mango/local.env only (none in the environment).
    term.start(
      dir,
      `env -u MANGO_BASE_URL -u MANGO_API_KEY node ${ROOT}/tools/cli/bin/mango.js sessions connect ${s.id}; echo "[exit $?]"; sleep 600`,
    );

    // History, then the idle status prompt.
    let screen = await screenUntil(shows('[idle] ›'), 'history loaded');
    expect(screen).toContain(`connected to ${s.id} "tmux"`);
    expect(screen).toContain('you: hi there');
    expect(screen).toContain('agent: Hello from the model.');

    // A message typed in the terminal, and the live answer.
    model.script((body) => ({
      content: [{ type: 'text', text: `You said: ${body.messages.at(-1).content[0].text}` }],
    }));
    term.type('what is two and two');
    screen = await screenUntil(shows('agent: You said: what is two and two'), 'live answer');
    expect(screen).toContain('-- status: running');
    await screenUntil((t) => t.trimEnd().endsWith('[idle] ›'), 'idle after the answer');

    // An approval: the model asks for bash (always_ask); the terminal shows it and denies it.
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'rm -rf /tmp/x' } }],
        stop_reason: 'tool_use',
      },
      (body) => ({
        content: [{ type: 'text', text: `Understood: ${body.messages.at(-1).content[0].content}` }],
      }),
    );
    term.type('clean up');
    screen = await screenUntil(shows('[awaiting approval 1] ›'), 'awaiting approval');
    const use = (await events(s.id)).find((e) => e.type === 'agent.tool_use')!;
    expect(screen).toContain(`tool bash [ask] ${use.id}: {"command":"rm -rf /tmp/x"}`);
    expect(screen).toContain(`-- status: awaiting approval (${use.id}; /allow or /deny)`);
    term.type('/deny not on this machine');
    screen = await screenUntil(shows('agent: Understood: not on this machine'), 'denial answered');
    expect(screen).toContain(`denied ${use.id}: not on this machine`);
    const confirmation = (await events(s.id)).find((e) => e.type === 'user.tool_confirmation')!;
    expect(confirmation).toMatchObject({
      tool_use_id: use.id,
      result: 'deny',
      deny_message: 'not on this machine',
    });
    await screenUntil((t) => t.trimEnd().endsWith('[idle] ›'), 'idle after the denial');

    // An interrupt: a slow model reply keeps the turn running; Ctrl-C interrupts it.
    model.script({ content: [{ type: 'text', text: 'never shown' }], delayMs: 60_000 });
    term.type('take your time');
    await screenUntil((t) => t.trimEnd().endsWith('[running] ›'), 'running');
    term.key('C-c');
    screen = await screenUntil(shows('-- interrupted'), 'interrupted');
    expect(screen).toContain('-- interrupt sent');
    await screenUntil((t) => t.trimEnd().endsWith('[idle] ›'), 'idle after the interrupt');
    expect(term.screen()).not.toContain('never shown');
    expect((await events(s.id)).filter((e) => e.type === 'user.interrupt')).toHaveLength(1);

    // The stream is cut; while it is down, another client's message is answered. After the proxy is
    // back the CLI re-lists the history and shows what it missed, once.
    model.script({ content: [{ type: 'text', text: 'Answered while you were away.' }] });
    await proxy.down();
    await screenUntil(shows('-- stream lost'), 'stream lost');
    await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'sent from elsewhere' }] }],
    });
    for (let i = 0; i < 300; i++) {
      const list = await events(s.id);
      if (list.filter((e) => e.type === 'session.status_idle').length >= 6) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(term.screen()).not.toContain('sent from elsewhere');
    await proxy.up();
    screen = await screenUntil(shows('agent: Answered while you were away.'), 'reconciled after the cut');
    expect(screen).toMatch(/-- reconnected; history reconciled \(\d+ missed event\(s\)\)/);
    expect(count(screen, 'you: sent from elsewhere')).toBe(1);
    expect(count(screen, 'agent: Hello from the model.')).toBe(1);

    // An uncertain write: the message reaches the API but the response never comes back. The CLI says
    // so and stops with exit code 3; it does not send the message again.
    model.script({ content: [{ type: 'text', text: 'Yes.' }] });
    proxy.dropWrites();
    term.type('are you there');
    screen = await screenUntil(shows('[exit 3]'), 'stopped after the uncertain write');
    expect(screen).toMatch(/-- message: outcome unknown \(.+\); not retried\./);
    const sent = (await events(s.id)).filter(
      (e) => e.type === 'user.message' && e.content[0].text === 'are you there',
    );
    expect(sent).toHaveLength(1);
    // MANGO_TEST_ARTIFACTS=<dir> keeps the final terminal screen.
    if (process.env.MANGO_TEST_ARTIFACTS)
      writeFileSync(join(process.env.MANGO_TEST_ARTIFACTS, 'sessions-connect.txt'), term.screen());
  }, 300_000);
});
