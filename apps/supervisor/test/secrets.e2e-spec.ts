import { lastResult, Stack, startStack, toolCall, watchContainers } from './support';

/** Markers of the Work secret in any form: the token prefix and the base64 of `{"sessions_token`. */
const SECRET_MARKERS = [/mango_wt_/, /sessions_token/, /eyJzZXNzaW9uc190b2tlb/];

/**
 * The worker's security boundary (docs/operator-guide.md, The Docker supervisor) on the real Session path (non-dumpable.e2e-spec checks the prctl primitive
 * alone): while a real item runner serves a Session, the Work token is absent from `docker inspect`, the
 * container environment and every process's command line, and a Bash child cannot read the runner's
 * /proc environ, memory or descriptors.
 */
describe('the Work token stays inside the item runner (real dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  let supervisor: Awaited<ReturnType<Stack['startSupervisor']>>;

  beforeAll(async () => {
    stack = await startStack('secrets');
    watcher = await watchContainers(stack.docker);
    supervisor = await stack.startSupervisor();
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  it('is absent from inspect, env and the process list, and unreadable through /proc from Bash', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    const probe = [
      'runner=$(for p in /proc/[0-9]*; do grep_ok=0; while IFS= read -r -d "" a; do [[ $a == */item-runner.js ]] && grep_ok=1; done < $p/cmdline; [ $grep_ok = 1 ] && echo ${p#/proc/}; done 2>/dev/null)',
      'echo "runner=$runner"',
      'cat /proc/$runner/environ >/dev/null 2>&1 && echo environ-readable || echo environ-denied',
      'ls /proc/$runner/fd >/dev/null 2>&1 && echo fd-readable || echo fd-denied',
      'cat /proc/$runner/mem >/dev/null 2>&1 && echo mem-readable || echo mem-denied',
    ].join('\n');
    // Every command line and every readable environment in the container ("ps" without procps).
    const ps =
      'for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do while IFS= read -r -d "" a; do printf "%s " "$a"; done < "$f"; echo; done 2>/dev/null';
    stack.model.script(
      toolCall('toolu_s1', 'bash', { command: probe }),
      (body: any) => {
        results.push(lastResult(body));
        return toolCall('toolu_s2', 'bash', { command: ps });
      },
      (body: any) => {
        results.push(lastResult(body));
        return toolCall('toolu_s3', 'bash', { command: 'env' });
      },
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'checked' }] };
      },
    );
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent('prober'),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'look around' }] }],
      })
    ).body;
    await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');

    const [probed, listed, env] = results;
    expect(probed!.text).toMatch(/^runner=\d+\nenviron-denied\nfd-denied\nmem-denied$/);
    expect(listed!.text).toMatch(/\/opt\/mango\/dist\/item-runner\/\w+\/item-runner\.js/); // the (bundled) runner was visible
    expect(listed!.text).toContain('TERM=dumb'); // and the shell's own environment too
    expect(env!.text).toContain('PWD=/workspace');
    expect(env!.text).not.toMatch(/MANGO_/);
    for (const marker of SECRET_MARKERS) {
      for (const r of results) expect(r.text).not.toMatch(marker);
    }

    const info = watcher.inspected.get(work.id)!;
    expect(info).toBeDefined();
    expect(info.Config.Env).toEqual(
      expect.arrayContaining([`MANGO_SESSION_ID=${s.id}`, 'MANGO_WORK_TYPE=session']),
    );
    const metadata = JSON.stringify(info);
    for (const marker of SECRET_MARKERS) expect(metadata).not.toMatch(marker);
    for (const forbidden of ['sk-model-secret', 'sk-scripted-model-key', 'mango_ak_', 'mango_ek_'])
      expect(metadata).not.toContain(forbidden);
    expect(info.HostConfig).toMatchObject({ ReadonlyRootfs: true, CapDrop: ['ALL'], NetworkMode: 'none' });
    expect(info.Config.User).toBe('1000:1000');
    // Nor is it in the supervisor's logs (which include the item runner's output).
    expect(supervisor.logs()).toContain('session activation ended');
    for (const marker of SECRET_MARKERS) expect(supervisor.logs()).not.toMatch(marker);
    expect(info.Mounts.find((m) => m.Destination === '/workspace')).toMatchObject({
      Type: 'volume',
      Name: `mango-session-${s.id.toLowerCase()}`,
    });
  }, 240_000);
});
