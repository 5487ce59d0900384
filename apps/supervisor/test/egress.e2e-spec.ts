import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppProcess } from '@mango/testing';
import { lastResult, Stack, startStack, toolCall } from './support';

/**
 * Sandbox egress under the Environment's policy (issue #41, ADR 0021), end to end: the real API,
 * orchestrator, Temporal and `mango-worker docker` on the real dockerd. The agent's bash in a sealed
 * Session container (`--network none`) uses curl unchanged — the runner's forwarder and the proxy
 * variables take it to the supervisor's proxy, which resolves `allowed.test` and `cp.test` to 127.0.0.1
 * (MANGO_WORKER_EGRESS_HOSTS, the test resolver) where a local test server and the API listen. The
 * policy is read at each activation: once it is cleared, the next activation has no egress at all.
 */
describe('sandbox egress under the Environment policy (real stack, real container, curl)', () => {
  let stack: Stack;
  let supervisor: AppProcess;
  let origin: Server;
  let originPort: number;
  let apiPort: number;
  const hits: string[] = [];

  beforeAll(async () => {
    origin = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} host=${req.headers.host}`);
      res.end('origin says hello');
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    originPort = (origin.address() as AddressInfo).port;
    stack = await startStack('egress');
    apiPort = Number(new URL(stack.api.url).port);
    const set = await stack.ws.post(`/v1/environments/${stack.envId}`, {
      config: {
        type: 'self_hosted',
        networking: {
          type: 'limited',
          allowed_hosts: [`allowed.test:${originPort}`, `cp.test:${apiPort}`],
        },
      },
    });
    if (set.status !== 200) throw new Error(`setting the policy failed: ${JSON.stringify(set.body)}`);
    supervisor = await stack.startSupervisor({
      MANGO_WORKER_EGRESS_HOSTS: 'allowed.test=127.0.0.1,cp.test=127.0.0.1,refused.test=127.0.0.1',
      MANGO_WORKER_EGRESS_ALLOWED_ADDRESSES: '127.0.0.1',
    });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    origin?.closeAllConnections();
    await new Promise((r) => (origin ? origin.close(r) : r(undefined)));
  });

  let lastSession = '';

  /** One Session whose agent runs `command` in bash once; the tool result. */
  async function bashOnce(name: string, command: string): Promise<{ text: string; is_error: boolean }> {
    const results: Array<{ text: string; is_error: boolean }> = [];
    const agent = await stack.agent(name);
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'fetch' }] }],
      })
    ).body;
    stack.model.script(toolCall('toolu_1', 'bash', { command }), (body: any) => {
      results.push(lastResult(body));
      return { content: [{ type: 'text', text: 'done' }] };
    });
    lastSession = s.id;
    const list = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'), 150_000);
    expect(list.at(-1)).toMatchObject({ type: 'session.status_idle' });
    return results[0]!;
  }

  const PROBE = (originPort: number, apiPort: number) =>
    [
      `curl -sS -m 20 http://allowed.test:${originPort}/hello; echo`,
      `curl -sS -m 20 -o /dev/null -D - http://cp.test:${apiPort}/v1/sessions | grep -i '^x-mango-egress-rule' | tr -d '\\r'`,
      `curl -sS -m 20 -o /dev/null -D - http://refused.test:${originPort}/ | grep -i '^x-mango-egress-rule' | tr -d '\\r'`,
      // HTTPS goes through CONNECT: the proxy's answer to it is curl's http_connect.
      `curl -sS -m 20 -o /dev/null -w '%{http_connect}\\n' https://refused.test:${originPort}/ 2>/dev/null || true`,
    ].join('\n');

  it('allowed host reached; control plane by an allowed name, and a refused host, are refused with their rules', async () => {
    const r = await bashOnce('egress-limited', PROBE(originPort, apiPort));
    expect(r.is_error).toBe(false);
    expect(r.text.split('\n')).toEqual([
      'origin says hello',
      'x-mango-egress-rule: control_plane',
      'x-mango-egress-rule: host_not_allowed',
      '403',
    ]);
    expect(hits).toEqual([`GET /hello host=allowed.test:${originPort}`]);
    // The supervisor recorded each connection for the Session, with the refusing rule.
    const logs = supervisor.logs();
    expect(logs).toMatch(/"host":"allowed\.test".*"allowed":true/);
    expect(logs).toMatch(/"host":"cp\.test".*"allowed":false,"rule":"control_plane"/);
    expect(logs).toMatch(/"host":"refused\.test".*"allowed":false,"rule":"host_not_allowed"/);
    // And reported to the API for the Session (sent in batches, the last when the activation ends).
    const records = async () =>
      (await stack.ws.get(`/v1/sessions/${lastSession}/egress_records?limit=100`)).body.data as any[];
    let seen = await records();
    for (const deadline = Date.now() + 60_000; seen.length < 4 && Date.now() < deadline;)
      seen = await new Promise((r) => setTimeout(r, 250)).then(records);
    expect(seen.map((r) => [r.kind, r.host, r.allowed, r.rule])).toEqual([
      ['http', 'allowed.test', true, null],
      ['http', 'cp.test', false, 'control_plane'],
      ['http', 'refused.test', false, 'host_not_allowed'],
      ['connect', 'refused.test', false, 'host_not_allowed'],
    ]);
    expect(seen[0].bytes_in).toBe('origin says hello'.length);
  }, 240_000);

  it('a cleared policy applies to the next activation: no proxy variables, no socket, nothing reached', async () => {
    const cleared = await stack.ws.post(`/v1/environments/${stack.envId}`, {
      config: { type: 'self_hosted', networking: null },
    });
    expect(cleared.body.config).toEqual({ type: 'self_hosted' });
    const r = await bashOnce(
      'egress-sealed',
      `env | grep -ci proxy; ls /run/mango; curl -sS -m 10 http://allowed.test:${originPort}/again 2>&1 | head -1`,
    );
    const [proxyVars, ...rest] = r.text.split('\n');
    expect(proxyVars).toBe('0');
    expect(rest).toEqual([
      'api.sock',
      expect.stringMatching(/^curl: \(6\) Could not resolve host: allowed\.test/),
    ]);
    expect(hits).toHaveLength(1);
  }, 240_000);
});
