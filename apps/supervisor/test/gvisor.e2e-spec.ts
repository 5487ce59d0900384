import type Docker from 'dockerode';
import { GVISOR_PIDS_LIMIT } from '@mango/adapter-docker';
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
 * The hardened runtime option (docs/operator-guide.md "gVisor"): with MANGO_WORKER_RUNTIME=runsc every
 * sandbox container — pooled, healthcheck and Session — runs under gVisor on the test dockerd, which
 * tools/ci/services.sh starts with runsc declared. The healthcheck, the sealing probe and the README
 * tour's bash turn pass there as under runc, each container's HostConfig says runsc, and its kernel is
 * gVisor's (dmesg). A runtime the daemon does not declare stops the supervisor at boot.
 */
describe('sandboxes under gVisor: MANGO_WORKER_RUNTIME=runsc (real API, orchestrator, Temporal, dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  let supervisorId: string;

  beforeAll(async () => {
    stack = await startStack('gvisor');
    const runtimes = Object.keys(((await stack.docker.info()) as { Runtimes?: object }).Runtimes ?? {});
    if (!runtimes.includes('runsc'))
      throw new Error(
        `the test dockerd declares no runsc runtime (${runtimes.join(', ')}): tools/ci/services.sh starts it with runsc declared; a dockerd started before that must be stopped (services.sh stop docker) and started again`,
      );
    watcher = await watchContainers(stack.docker);
    supervisorId = `test-${stack.envId.toLowerCase()}`;
    // The warm pool stays on (size 1): the healthcheck is served by a pooled container, the Session by a cold one.
    await stack.startSupervisor({ MANGO_WORKER_RUNTIME: 'runsc' });
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  const expectGvisorHardening = (info: Docker.ContainerInspectInfo) => {
    expect(info.HostConfig).toMatchObject({
      Runtime: 'runsc',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      NetworkMode: 'none',
      PidsLimit: GVISOR_PIDS_LIMIT,
    });
    expect(info.Config.User).toBe('1000:1000');
    expect(info.Mounts.find((m) => m.Destination === '/run/mango')).toMatchObject({
      Type: 'bind',
      RW: false,
    });
  };

  it('a healthcheck succeeds in a gVisor container (its Work API socket, made after the container started, is reachable)', async () => {
    const created = await stack.ws.post(`/v1/environments/${stack.envId}/work`, {
      data: { type: 'healthcheck' },
    });
    let work: any;
    for (let i = 0; i < 600; i++) {
      work = (await stack.ws.get(`/v1/environments/${stack.envId}/work/${created.body.id}`)).body;
      if (work.state === 'stopped') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(work).toMatchObject({
      state: 'stopped',
      result: { status: 'succeeded', message: 'Sandbox process and workspace check passed' },
    });
    // Every container this supervisor made (the pool's, including its refill) runs under runsc.
    const ours = await stack.docker.listContainers({
      all: true,
      filters: { label: [`dev.mango.supervisor=${supervisorId}`] },
    });
    // A container listed here may be removed before its inspect (the healthcheck's own container ends with
    // its check): those are skipped, but at least one must be inspected.
    const inspected = [];
    for (const c of ours) {
      const info = await stack.docker
        .getContainer(c.Id)
        .inspect()
        .catch((e: { statusCode?: number }) => {
          if (e.statusCode === 404) return null;
          throw e;
        });
      if (info) inspected.push(info);
    }
    expect(inspected.length).toBeGreaterThan(0);
    for (const info of inspected) expectGvisorHardening(info);
  }, 150_000);

  it("a Session's bash turn runs on gVisor's kernel, sealed, and the README tour's command works", async () => {
    const probe = sealingProbe(stack);
    const results: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: ReturnType<typeof toolCall> | { content: any[] }) => (body: any) => {
      results.push(lastResult(body));
      return next;
    };
    const agent = await stack.agent('gvisor');
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'probe the sandbox' }] }],
      })
    ).body;
    stack.model.script(
      // runc refuses dmesg to the sandbox user (no CAP_SYSLOG); gVisor's own kernel log is readable.
      toolCall('toolu_1', 'bash', { command: 'dmesg | head -n 1 | cut -c 16-' }),
      step(toolCall('toolu_2', 'bash', { command: `SESSION=${s.id}\n${probe.command}` })),
      step(toolCall('toolu_3', 'bash', { command: USERLAND_COMMAND })),
      step({ content: [{ type: 'text', text: 'Sandboxed.' }] }),
    );
    const list = await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'), 150_000);
    expect(list.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(results.map((r) => r.is_error)).toEqual([false, false, false]);
    expect(results[0]!.text).toBe('Starting gVisor...');
    expect(results[1]!.text.split('\n')).toEqual(probe.expected);
    expect(results[2]!.text).toMatch(USERLAND_OUTPUT);
    const work = (await stack.workOf(s.id))[0]!;
    expectGvisorHardening(watcher.inspected.get(work.id)!);
  }, 240_000);

  it('a runtime the daemon does not declare stops the supervisor at boot, saying how to declare it', async () => {
    await expect(
      stack.startSupervisor({ MANGO_WORKER_RUNTIME: 'no-such-runtime', MANGO_SUPERVISOR_ID: 'bad-runtime' }),
    ).rejects.toThrow(
      /MANGO_WORKER_RUNTIME=no-such-runtime is not a runtime this Docker daemon declares \(it declares: [^)]*runsc[^)]*\)/,
    );
  }, 60_000);
});
