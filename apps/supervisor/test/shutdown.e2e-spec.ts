import { lastResult, Stack, startStack, toolCall, untilFileIn, watchContainers } from './support';

/**
 * Supervisor shutdown (docs/operator-guide.md, The Docker supervisor): SIGTERM to `mango-worker docker` while a Session tool call runs. The supervisor stops
 * claiming and signals its items; the item finishes the call in flight, delivers its result under the
 * still-renewed lease, force-Stops its Work, and only then does the supervisor exit (0).
 */
describe('supervisor shutdown drains running Session items (real dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;

  beforeAll(async () => {
    stack = await startStack('shutdown');
    watcher = await watchContainers(stack.docker);
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  it('the call in flight completes and its result is posted before the Work stops and the supervisor exits', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(
      toolCall('toolu_d1', 'bash', { command: ': > /workspace/started; sleep 3; echo finished' }),
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    const supervisor = await stack.startSupervisor({ MANGO_SUPERVISOR_ID: 'shutdown-a' });
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent('drainer'),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'work a bit' }] }],
      })
    ).body;
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    for (let i = 0; i < 300 && !watcher.seen.some((e) => e.work === work.id && e.action === 'start'); i++)
      await new Promise((r) => setTimeout(r, 100));
    const started = watcher.seen.find((e) => e.work === work.id && e.action === 'start')!;
    await untilFileIn(stack.docker.getContainer(started.id), '/workspace/started'); // the call is in flight

    expect(await supervisor.stop('SIGTERM')).toBe(0);

    // By the time the supervisor has exited, the result was delivered and the Work stopped by its item.
    const events = await stack.events(s.id);
    const result = events.find((e) => e.type === 'user.tool_result');
    expect(result).toMatchObject({ is_error: false, content: [{ type: 'text', text: 'finished' }] });
    // The drained item stopped with its turn still running, so the Session got a fresh queued item for the
    // next supervisor (no turn is left without a worker).
    expect((await stack.workOf(s.id)).map((w) => w.state)).toEqual(['stopped', 'queued']);
    expect(watcher.seen.filter((e) => e.work === work.id).map((e) => e.action)).toEqual(
      expect.arrayContaining(['create', 'start', 'kill', 'die', 'destroy']),
    );
    expect(supervisor.logs()).toMatch(/draining: waiting for running items to finish/);
    expect(supervisor.logs()).toMatch(/reason\\+":\\+"drained/);
    expect(supervisor.logs()).toMatch(/activation stopped/);
    expect(supervisor.logs()).not.toMatch(/killing the remaining items/);
    // The turn went on to finish with the delivered result.
    await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(results).toEqual([{ text: 'finished', is_error: false }]);
  }, 240_000);
});

/**
 * A `user.interrupt` while a call runs: the server closes the call and ends the turn; the worker, still
 * reading the stream, cancels the running command (its shell is killed) and posts nothing for it.
 */
describe('an interrupt cancels the running call (real dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;

  beforeAll(async () => {
    stack = await startStack('interrupt');
    watcher = await watchContainers(stack.docker);
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  it('the command is killed, no result is posted, and the activation ends idle', async () => {
    stack.model.script(
      toolCall('toolu_i1', 'bash', { command: ': > /workspace/started; sleep 20; : > /workspace/finished' }),
    );
    const supervisor = await stack.startSupervisor({ MANGO_SUPERVISOR_ID: 'interrupt-a' });
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent('interrupted'),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'take your time' }] }],
      })
    ).body;
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    for (let i = 0; i < 300 && !watcher.seen.some((e) => e.work === work.id && e.action === 'start'); i++)
      await new Promise((r) => setTimeout(r, 100));
    const started = watcher.seen.find((e) => e.work === work.id && e.action === 'start')!;
    const container = stack.docker.getContainer(started.id);
    await untilFileIn(container, '/workspace/started');

    await stack.ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    const stopped = await stack.untilWork(s.id, (w) => w[0]?.state === 'stopped');
    expect(stopped.map((w) => w.state)).toEqual(['stopped']);
    const events = await stack.events(s.id);
    expect(events.some((e) => e.type === 'user.tool_result')).toBe(false);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['user.interrupt', 'session.status_idle']),
    );
    expect(supervisor.logs()).toMatch(/the call was closed \(interrupt or end of the Session\): not posted/);
    // The command did not complete: the shell was killed under it (an error, not exit 0).
    expect(supervisor.logs()).toMatch(/is_error\\+":true,\\+"msg\\+":\\+"tool call finished/);
    expect(supervisor.logs()).toMatch(/reason\\+":\\+"idle/);
  }, 240_000);
});
