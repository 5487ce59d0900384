import {
  lastResult,
  sealingProbe,
  Stack,
  startStack,
  toolCall,
  USERLAND_COMMAND,
  USERLAND_OUTPUT,
  watchContainers,
} from './support';

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
    const probe = sealingProbe(stack);
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
      toolCall('toolu_1', 'bash', { command: `SESSION=${s.id}\n${probe.command}` }),
      step(toolCall('toolu_2', 'bash', { command: USERLAND_COMMAND })),
      step({ content: [{ type: 'text', text: 'Sealed.' }] }),
    );
    const list = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(list.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(results[0]!.is_error).toBe(false);
    expect(results[0]!.text.split('\n')).toEqual(probe.expected);
    expect(results[1]!.is_error).toBe(false);
    expect(results[1]!.text).toMatch(USERLAND_OUTPUT);
    const work = (await stack.workOf(s.id))[0]!;
    const info = watcher.inspected.get(work.id)!;
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.Mounts.find((m) => m.Destination === '/run/mango')).toMatchObject({
      Type: 'bind',
      RW: false,
    });
  }, 180_000);
});
