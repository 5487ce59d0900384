import { lastResult, Stack, startStack, toolCall } from './support';

/**
 * An idle activation gives its slot to waiting Work (docs/operator-guide.md, The Docker supervisor). One
 * slot and a 10-minute idle time: without the yield, Session B's first tool call would wait for A's idle
 * time to run out. The supervisor sees A's runner report its idle countdown, finds B's Work with a Poll,
 * asks A's container to end (drain: A's runner Stops its Work) and runs B in the freed slot; A's next
 * message starts a new activation on the same workspace, for which B's idle activation yields in turn.
 * A supervisor killed and replaced adopts an idle activation and still learns that it is idle.
 */
const config = {
  MANGO_MAX_CONCURRENT_ITEMS: '1',
  MANGO_SESSION_IDLE_MS: '600000',
  MANGO_WORKER_POOL_SIZE: '0',
};

describe('idle activations yield their supervisor slot to waiting Work (real API, orchestrator, dockerd)', () => {
  let stack: Stack;
  let supervisor: Awaited<ReturnType<Stack['startSupervisor']>>;

  beforeAll(async () => {
    stack = await startStack('idleyield');
    supervisor = await stack.startSupervisor(config);
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('a second Session runs in the slot the first one held while idle, and the first resumes after it', async () => {
    const results: string[] = [];
    const answer = (text: string) => (body: any) => {
      results.push(lastResult(body).text);
      return { content: [{ type: 'text', text }] };
    };
    const agent = await stack.agent('yield');
    const start = async (command: string, text: string) => {
      stack.model.script(toolCall(`toolu_${results.length}`, 'bash', { command }), answer(text));
      return (
        await stack.ws.post('/v1/sessions', {
          agent,
          environment_id: stack.envId,
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
        })
      ).body.id as string;
    };
    const idles = (id: string, n: number) =>
      stack.until(id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= n, 120_000);

    const a = await start('echo kept > note.txt && echo a-ran', 'A done');
    await idles(a, 1);
    expect(results).toEqual(['a-ran']);
    // A's activation now holds the only slot and waits out its idle time (10 minutes).
    const [aFirst] = await stack.workOf(a);
    expect(aFirst?.state).not.toBe('stopped');

    const b = await start('echo b-ran', 'B done');
    await idles(b, 1);
    expect(results).toEqual(['a-ran', 'b-ran']);
    // A's Work was Stopped by its runner on the supervisor's request, long before its idle time.
    expect((await stack.untilWork(a, (w) => w[0]?.state === 'stopped')).map((w) => w.state)).toEqual([
      'stopped',
    ]);
    const logs = supervisor.logs();
    expect(logs).toContain(`"work_id":"${aFirst!.id}"`);
    expect(logs).toMatch(/asking the Session activation idle longest to end/);
    expect(logs).toMatch(/session activation ended.{0,80}drained|drained.{0,200}session activation ended/);

    // A goes on: a new activation on the same workspace; B's idle activation makes room for it.
    stack.model.script(toolCall('toolu_again', 'bash', { command: 'cat note.txt' }), answer('A again'));
    await stack.ws.post(`/v1/sessions/${a}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }],
    });
    await idles(a, 2);
    expect(results).toEqual(['a-ran', 'b-ran', 'kept']);
    expect((await stack.workOf(a)).map((w) => w.state)).toEqual(['stopped', expect.any(String)]);
    expect((await stack.untilWork(b, (w) => w[0]?.state === 'stopped')).map((w) => w.state)).toEqual([
      'stopped',
    ]);
    // A supervisor killed and replaced adopts A's idle activation; it reads the container's output only
    // from then on, and learns A is idle from the line the runner repeats while idle (every 20 s).
    expect(await supervisor.stop('SIGKILL')).toBeNull();
    const replaced = await stack.startSupervisor(config);
    stack.model.script(toolCall('toolu_b2', 'bash', { command: 'echo b-again' }), answer('B again'));
    await stack.ws.post(`/v1/sessions/${b}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }],
    });
    await idles(b, 2);
    expect(results).toEqual(['a-ran', 'b-ran', 'kept', 'b-again']);
    expect(replaced.logs()).toMatch(/adopted a running container left by an earlier run/);
    expect(replaced.logs()).toMatch(/asking the Session activation idle longest to end/);
    expect(
      (await stack.untilWork(a, (w) => w.every((x) => x.state === 'stopped'))).map((w) => w.state),
    ).toEqual(['stopped', 'stopped']);

    // Each Session's events are whole: one result per call, nothing failed.
    for (const id of [a, b]) {
      const events = await stack.events(id);
      expect(events.filter((e) => e.type === 'session.error')).toEqual([]);
      expect(events.filter((e) => e.type === 'user.tool_result').length).toBe(
        events.filter((e) => e.type === 'agent.tool_use').length,
      );
    }
  }, 300_000);
});
