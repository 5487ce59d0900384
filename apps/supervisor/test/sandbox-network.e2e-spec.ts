import { lastResult, Stack, startStack, toolCall, watchContainers } from './support';

/**
 * The sealed sandbox (docs/operator-guide.md "Sandbox network"): Session containers run with no network.
 * From the agent's bash nothing of the host is reachable — not PostgreSQL, Temporal, S3 or the API's port —
 * and the Work API socket answers only the Work token's routes (403 locally for anything else, 401 without
 * the token; a smuggled request is refused locally, 400). The turn itself still completes through the socket,
 * and the image has a real userland.
 */
describe('a sealed sandbox (real API, orchestrator, Temporal, dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;

  beforeAll(async () => {
    stack = await startStack('sealed');
    watcher = await watchContainers(stack.docker);
    await stack.startSupervisor();
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  it('bash reaches no host port, the socket passes only Work token routes, and the turn completes', async () => {
    const port = (u: string) => new URL(u.includes('://') ? u : `tcp://${u}`).port;
    const targets = {
      postgresql: port(process.env.MANGO_DATABASE_URL!),
      temporal: port(process.env.MANGO_TEMPORAL_ADDRESS!),
      s3: port(process.env.MANGO_S3_ENDPOINT!),
      api: port(stack.api.url),
    };
    const probe = [
      ...Object.entries(targets).map(
        ([name, p]) =>
          `if timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${p}' 2>/dev/null; then echo "${name}:open"; else echo "${name}:closed"; fi`,
      ),
      'echo "interfaces:$(ls /sys/class/net | tr "\\n" " ")"',
      'echo "routes:$(tail -n +2 /proc/net/route | wc -l)"',
      `echo "agents:$(curl -s --unix-socket /run/mango/api.sock http://mango/v1/agents | jq -r .error.type)"`,
      `echo "poll:$(curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/mango/api.sock 'http://mango/v1/environments/${stack.envId}/work/poll')"`,
      `echo "session-without-token:$(curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/mango/api.sock http://mango/v1/sessions/$SESSION)"`,
      // Request smuggling (issue #34): a GET of the Session's events whose chunked body is a whole second
      // request. Every status line the socket answers is printed: one local 400, nothing from Mango.
      `SESSION=$SESSION python3 - <<'PY'`,
      'import os, socket',
      "s = socket.socket(socket.AF_UNIX); s.connect('/run/mango/api.sock')",
      "inner = b'GET /v1/agents?smuggled=e2e HTTP/1.1\\r\\nHost: mango\\r\\n\\r\\n'",
      "head = b'GET /v1/sessions/' + os.environ['SESSION'].encode() + b'/events HTTP/1.1\\r\\nHost: mango\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'",
      "s.sendall(head + b'%x\\r\\n' % len(inner) + inner + b'\\r\\n0\\r\\n\\r\\n')",
      "data = b''",
      'while True:',
      '    chunk = s.recv(65536)',
      '    if not chunk: break',
      '    data += chunk',
      "print('smuggle:' + ' '.join(l.split()[1].decode() for l in data.split(b'\\r\\n') if l.startswith(b'HTTP/1.1 ')))",
      'PY',
    ].join('\n');
    const results: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: ReturnType<typeof toolCall> | { content: any[] }) => (body: any) => {
      results.push(lastResult(body));
      return next;
    };
    const agent = await stack.agent('sealed');
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'probe the network' }] }],
      })
    ).body;
    stack.model.script(
      toolCall('toolu_1', 'bash', { command: `SESSION=${s.id}\n${probe}` }),
      step(
        toolCall('toolu_2', 'bash', {
          command: 'git --version && python3 -V && rg --version | head -1 && echo ok | sed s/ok/fine/',
        }),
      ),
      step({ content: [{ type: 'text', text: 'Sealed.' }] }),
    );
    const list = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(list.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(results[0]!.is_error).toBe(false);
    expect(results[0]!.text.split('\n')).toEqual([
      'postgresql:closed',
      'temporal:closed',
      's3:closed',
      'api:closed',
      'interfaces:lo ',
      'routes:0',
      'agents:permission_error',
      'poll:403',
      'session-without-token:401',
      'smuggle:400',
    ]);
    expect(results[1]!.is_error).toBe(false);
    expect(results[1]!.text).toMatch(/^git version 2\.\d+.*\nPython 3\.\d+\.\d+\nripgrep \d+.*\nfine$/s);
    const work = (await stack.workOf(s.id))[0]!;
    const info = watcher.inspected.get(work.id)!;
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.Mounts.find((m) => m.Destination === '/run/mango')).toMatchObject({
      Type: 'bind',
      RW: false,
    });
  }, 180_000);
});
