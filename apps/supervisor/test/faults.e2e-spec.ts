import Docker from 'dockerode';
import { pauseContainer } from '@mango/testing';
import { lastResult, Stack, startStack, toolCall, untilFileIn, watchContainers } from './support';

/**
 * Worker faults (docs/operator-guide.md, The Docker supervisor) on real processes and the real dockerd: a supervisor killed with SIGKILL while its
 * item's worker is frozen is replaced by another supervisor, which reclaims the item, force-removes the
 * old container and only then starts the new one; and a lease lost mid-tool cancels the call and posts
 * nothing.
 */
describe('faults (real API, orchestrator, dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  const TTL = { MANGO_WORK_TTL_SECONDS: '6' };

  beforeAll(async () => {
    stack = await startStack('faults');
    watcher = await watchContainers(stack.docker);
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function startedContainer(workId: string): Promise<Docker.Container> {
    for (let i = 0; i < 600; i++) {
      const start = watcher.seen.find((e) => e.work === workId && e.action === 'start');
      if (start) return stack.docker.getContainer(start.id);
      await sleep(100);
    }
    throw new Error(`no container started for ${workId}`);
  }

  async function session(text: string) {
    return (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent('faulty'),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
      })
    ).body as { id: string };
  }

  it('kill -9 the supervisor, its worker frozen: another supervisor reclaims, removes the old container first, then runs', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(
      toolCall('toolu_f1', 'bash', {
        command:
          'if [ -e /workspace/first ]; then echo second attempt; else : > /workspace/first; sleep 300; fi',
      }),
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'recovered' }] };
      },
    );
    const a = await stack.startSupervisor({ ...TTL, MANGO_SUPERVISOR_ID: 'faults-a' });
    const s = await session('run the long job');
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    const old = await startedContainer(work.id);
    await untilFileIn(old, '/workspace/first'); // the first attempt is inside its long tool call

    expect(await a.stop('SIGKILL')).toBeNull();
    await pauseContainer(old); // its host is wedged: no more heartbeats, nobody removes it
    const b = await stack.startSupervisor({ ...TTL, MANGO_SUPERVISOR_ID: 'faults-b' });

    const done = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(results).toEqual([{ text: 'second attempt', is_error: false }]);
    expect(done.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    // The same Work item was reclaimed (no second activation), and ended stopped.
    const items = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');
    expect(items.map((w) => [w.id, w.state])).toEqual([[work.id, 'stopped']]);

    const mine = watcher.seen.filter((e) => e.work === work.id);
    const containers = [...new Set(mine.filter((e) => e.action === 'create').map((e) => e.id))];
    expect(containers).toHaveLength(2);
    expect(containers[0]).toBe(old.id);
    const oldGone = mine.find((e) => e.id === old.id && e.action === 'destroy')!;
    const newCreated = mine.find((e) => e.id === containers[1] && e.action === 'create')!;
    expect(oldGone).toBeDefined();
    expect(oldGone.time).toBeLessThan(newCreated.time);
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 300_000);

  it('a lease lost mid-tool cancels the call: the shell is killed and the stale worker posts nothing; the next activation re-runs it', async () => {
    const supervisor = await stack.startSupervisor({ ...TTL, MANGO_SUPERVISOR_ID: 'faults-c' });
    stack.model.script(
      toolCall('toolu_f2', 'bash', {
        // Each run marks its own start and finish, so the stopped run and a later re-run are told apart.
        command:
          'id=${EPOCHREALTIME/./}; : > /workspace/started-$id; sleep 8; : > /workspace/finished-$id; echo done',
      }),
    );
    const s = await session('run and be stopped');
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    const container = await startedContainer(work.id);
    await untilStarted(container);
    const use = (await stack.events(s.id)).find((e) => e.type === 'agent.tool_use')!;

    // The operator force-stops the Work: its token dies and the next heartbeat finds the lease gone.
    expect(
      (await stack.ws.post(`/v1/environments/${stack.envId}/work/${work.id}/stop`, { force: true })).status,
    ).toBe(204);
    for (
      let i = 0;
      i < 300 && !watcher.seen.some((e) => e.id === container.id && e.action === 'destroy');
      i++
    )
      await sleep(100);
    expect(watcher.seen.some((e) => e.id === container.id && e.action === 'destroy')).toBe(true);

    const logs = supervisor.logs();
    // The stale worker either notices first (heartbeat 401, or its stream closing on the dead token) and
    // cancels, or the replacement activation removes its container before starting; either way it posts
    // nothing (checked below: exactly one result, and its own run never finished).
    expect(logs).not.toMatch(/tool result not accepted/);

    // The Session was still running, so its Work was replaced at once; the next activation runs the open
    // call again (tools get the original event id for idempotent side effects) and posts the one result.
    const results = await stack.until(s.id, (l) => l.some((e) => e.type === 'user.tool_result'));
    expect(results.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    expect(results.find((e) => e.type === 'user.tool_result')!.tool_use_id).toBe(use.id);
    const works = await stack.workOf(s.id);
    expect(works.length).toBe(2);
    expect(works[0].id).toBe(work.id);
    // One activation per Session workspace: the stale container was gone before the replacement existed.
    const oldGone = watcher.seen.find((e) => e.id === container.id && e.action === 'destroy')!;
    const newCreated = watcher.seen.find((e) => e.work === works[1].id && e.action === 'create')!;
    expect(oldGone.time).toBeLessThan(newCreated.time);

    // The stopped run's shell was killed mid-command: its "finished" mark never appeared.
    await sleep(9000);
    const probe = await stack.docker.createContainer({
      Image: process.env.MANGO_BASE_IMAGE!,
      Cmd: ['ls', '-A', '/workspace'],
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [{ Type: 'volume', Source: `mango-session-${s.id.toLowerCase()}`, Target: '/workspace' }],
      },
    });
    try {
      await probe.start();
      await probe.wait();
      const listing = (await probe.logs({ stdout: true, stderr: true })).toString('utf8');
      const marks = (kind: string) =>
        [...listing.matchAll(new RegExp(`${kind}-(\\d+)`, 'g'))].map((m) => m[1]!).sort();
      const started = marks('started');
      expect(started).toHaveLength(2);
      // Only the re-run (the later start) finished.
      expect(marks('finished')).toEqual([started[1]]);
    } finally {
      await probe.remove({ force: true });
    }
  }, 300_000);
});

/** Waits until the container's workspace holds a `started-*` mark (the call is in flight). */
async function untilStarted(container: import('dockerode').Container): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const exec = await container.exec({
      Cmd: ['bash', '-c', 'ls /workspace/started-*'],
      User: '1000:1000',
      AttachStdout: true,
    });
    const stream = await exec.start({});
    await new Promise((r) => stream.on('end', r).resume());
    if ((await exec.inspect()).ExitCode === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the call never started');
}
