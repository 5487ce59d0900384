import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import {
  lastResult,
  Stack,
  startStack,
  toolCall,
  touchIn,
  untilFileIn,
  untilLogged,
  watchContainers,
} from './support';

/**
 * Supervisor restarts (docs/operator-guide.md, "Supervisor restarts") on real processes and the real
 * dockerd: a supervisor killed with SIGKILL while its item's tool runs is replaced by a supervisor with
 * the same id, which adopts the running container instead of removing it — it serves the container's Work
 * API socket again, the runner's retried heartbeats and result get through, and the tool runs once. A
 * lease lost while no supervisor ran makes the adopted runner stop its command; the container is cleaned
 * up and the next activation answers the call.
 */
describe('supervisor restart adopts live containers (real API, orchestrator, dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  let socketRoot: string;
  // Renewed every 10 s: the runner retries a failed renewal until 30 s after the last one.
  const TTL = { MANGO_WORK_TTL_SECONDS: '30' };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    stack = await startStack('adopt');
    watcher = await watchContainers(stack.docker);
    socketRoot = mkdtempSync(join(tmpdir(), 'mango-adopt-'));
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
    if (socketRoot) rmSync(socketRoot, { recursive: true, force: true });
  });

  async function startedContainer(workId: string): Promise<Docker.Container> {
    for (let i = 0; i < 600; i++) {
      const start = watcher.seen.find((e) => e.work === workId && e.action === 'start');
      if (start) return stack.docker.getContainer(start.id);
      await sleep(100);
    }
    throw new Error(`no container started for ${workId}`);
  }

  async function untilDestroyed(id: string, ms = 120_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (watcher.seen.some((e) => e.id === id && e.action === 'destroy')) return true;
      await sleep(200);
    }
    return false;
  }

  async function session(text: string) {
    return (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent('adopt'),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
      })
    ).body as { id: string };
  }

  // Counts its starts and finishes in the Session workspace, which outlives containers. It waits for a gate
  // file the test creates, never for a fixed time: the runner renews its lease every 10 s, so a tool that
  // slept a fixed 10 s (as these did) raced the renewal that tells an adopted runner its lease is gone, and
  // a supervisor slow to start on a loaded machine found the container already exited instead of adopting it.
  // `stopOnlyFirst` lets every run after the first pass the gate, for the activation after a lost lease.
  const countingTool = (tag: string, opts: { stopOnlyFirst?: boolean } = {}) => {
    const wait = `until [ -e /workspace/go-${tag} ]; do sleep 0.2; done`;
    const gate = opts.stopOnlyFirst
      ? `if [ "$(wc -l < /workspace/runs-${tag})" -lt 2 ]; then ${wait}; fi`
      : wait;
    return {
      command: `echo run >> /workspace/runs-${tag}; ${gate}; echo done >> /workspace/done-${tag}; echo "runs=$(wc -l < /workspace/runs-${tag}) finished=$(wc -l < /workspace/done-${tag})"`,
    };
  };

  it('kill -9 the supervisor mid-tool, a new one with the same id: the container is adopted, the tool runs once, the turn finishes', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(toolCall('toolu_a1', 'bash', countingTool('a')), (body: any) => {
      results.push(lastResult(body));
      return { content: [{ type: 'text', text: 'adopted' }] };
    });
    const config = { ...TTL, MANGO_SUPERVISOR_ID: 'adopt-a', MANGO_WORKER_SOCKET_DIR: socketRoot };
    const a = await stack.startSupervisor(config);
    const s = await session('run the job once');
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    const container = await startedContainer(work.id);
    await untilFileIn(container, '/workspace/runs-a'); // the tool is running

    expect(await a.stop('SIGKILL')).toBeNull();
    expect((await container.inspect()).State.Running).toBe(true);
    const b = await stack.startSupervisor(config);
    // The tool is still running when the new supervisor adopts it; it finishes only afterwards.
    await untilLogged(b, 'adopted a running container left by an earlier run');
    await touchIn(container, '/workspace/go-a');

    const done = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'), 150_000);
    expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    // Ran once, answered once: by the container that was adopted, not by a second activation.
    expect(results).toEqual([{ text: 'runs=1 finished=1', is_error: false }]);
    const answers = done.filter((e) => e.type === 'user.tool_result');
    expect(answers).toHaveLength(1);
    expect(answers[0].tool_use_id).toBe(done.find((e) => e.type === 'agent.tool_use')!.id);
    expect(done.filter((e) => e.type === 'user.message')).toHaveLength(1); // no new input was needed
    const items = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');
    expect(items.map((w) => [w.id, w.state])).toEqual([[work.id, 'stopped']]);
    const created = new Set(
      watcher.seen.filter((e) => e.work === work.id && e.action === 'create').map((e) => e.id),
    );
    expect([...created]).toEqual([container.id]);

    // The adopted container ended on its own (idle) and got a normal clean-up: removed, socket closed.
    expect(await untilDestroyed(container.id)).toBe(true);
    for (let i = 0; i < 50 && existsSync(join(socketRoot, work.id.toLowerCase())); i++) await sleep(100);
    expect(existsSync(join(socketRoot, work.id.toLowerCase()))).toBe(false);
    const logs = b.logs();
    expect(logs).toContain('adopted a running container left by an earlier run');
    expect(logs).toContain('adopted item container finished and was removed');
    expect(logs).not.toContain('removed containers left by an earlier run');
    // The Session's workspace volume stays (Session workspace rules are unchanged).
    expect(
      (await stack.docker.getVolume(`mango-session-${s.id.toLowerCase()}`).inspect()).Name,
    ).toBeDefined();
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 400_000);

  it('a lease lost while no supervisor ran: the adopted runner stops its command, the container is removed, the next activation answers the call once', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(
      toolCall('toolu_a2', 'bash', countingTool('b', { stopOnlyFirst: true })),
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'answered after the lease loss' }] };
      },
    );
    const config = { ...TTL, MANGO_SUPERVISOR_ID: 'adopt-b', MANGO_WORKER_SOCKET_DIR: socketRoot };
    const a = await stack.startSupervisor(config);
    const s = await session('run the job, lose the lease');
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    const container = await startedContainer(work.id);
    await untilFileIn(container, '/workspace/runs-b');

    expect(await a.stop('SIGKILL')).toBeNull();
    // The operator force-stops the Work while no supervisor runs: its token dies with the lease.
    expect(
      (await stack.ws.post(`/v1/environments/${stack.envId}/work/${work.id}/stop`, { force: true })).status,
    ).toBe(204);
    expect((await container.inspect()).State.Running).toBe(true);
    const b = await stack.startSupervisor(config);

    expect(await untilDestroyed(container.id)).toBe(true);
    const done = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'), 150_000);
    expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    // The stale run never passes its gate: it was stopped mid-command and posted nothing; the next activation
    // ran the call again and went through.
    expect(results).toEqual([{ text: 'runs=2 finished=1', is_error: false }]);
    expect(done.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    const works = await stack.workOf(s.id);
    expect(works.map((w) => w.id)[0]).toBe(work.id);
    expect(works).toHaveLength(2);
    // One activation per Session workspace: the adopted container was gone before the next one existed.
    const oldGone = watcher.seen.find((e) => e.id === container.id && e.action === 'destroy')!;
    const next = watcher.seen.find((e) => e.work === works[1].id && e.action === 'create')!;
    expect(oldGone.time).toBeLessThan(next.time);
    expect(b.logs()).toContain('adopted a running container left by an earlier run');
    expect(b.logs()).not.toMatch(/tool result not accepted/);
    // The socket is closed after the container is removed: give the clean-up a moment, as above.
    for (let i = 0; i < 50 && existsSync(join(socketRoot, work.id.toLowerCase())); i++) await sleep(100);
    expect(existsSync(join(socketRoot, work.id.toLowerCase()))).toBe(false);
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 400_000);

  it('an adopted container counts against MANGO_MAX_CONCURRENT_ITEMS: with a limit of 1, the next item starts only after it exits', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    // Both Sessions share the scripted model: each request is answered by what it is.
    const route = (body: any) => {
      const block = body.messages.at(-1).content[0];
      if (block.type === 'tool_result') {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'first done' }] };
      }
      if (block.text === 'second') return { content: [{ type: 'text', text: 'hello' }] };
      return toolCall('toolu_a3', 'bash', countingTool('c'));
    };
    stack.model.script(route, route, route);
    const config = { ...TTL, MANGO_SUPERVISOR_ID: 'adopt-c', MANGO_WORKER_SOCKET_DIR: socketRoot };
    const a = await stack.startSupervisor(config);
    const first = await session('run the long job');
    const [work] = await stack.untilWork(first.id, (w) => w.length === 1 && w[0].state === 'active');
    const container = await startedContainer(work.id);
    await untilFileIn(container, '/workspace/runs-c');

    expect(await a.stop('SIGKILL')).toBeNull();
    const b = await stack.startSupervisor({ ...config, MANGO_MAX_CONCURRENT_ITEMS: '1' });
    await untilLogged(b, 'adopted a running container left by an earlier run');
    const second = await session('second');

    const [next] = await stack.untilWork(second.id, (w) => w.length === 1, 60_000);
    // While the adopted container runs, the supervisor at its limit starts nothing for the queued item. Five
    // seconds is many poll cycles; a supervisor that ignored the adopted container would create one now.
    await sleep(5_000);
    expect(watcher.seen.filter((e) => e.work === next.id)).toEqual([]);
    await touchIn(container, '/workspace/go-c');
    let created: { time: number } | undefined;
    for (let i = 0; i < 1500 && !created; i++) {
      created = watcher.seen.find((e) => e.work === next.id && e.action === 'create');
      if (!created) await sleep(100);
    }
    expect(created).toBeDefined();
    const adoptedGone = watcher.seen.find((e) => e.id === container.id && e.action === 'destroy');
    expect(adoptedGone).toBeDefined();
    expect(adoptedGone!.time).toBeLessThan(created!.time);
    expect(results).toEqual([{ text: 'runs=1 finished=1', is_error: false }]);
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 400_000);
});
