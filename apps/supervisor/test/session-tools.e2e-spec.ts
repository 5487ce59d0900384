import { lastResult, Stack, startStack, toolCall, watchContainers } from './support';

/**
 * A Session end to end through `mango-worker docker` (docs/operator-guide.md, The Docker supervisor): the scripted model calls
 * bash, read, write, edit, glob and grep; each really runs in the hardened container and its result is
 * posted with the Work token. Two user turns are two Work activations (two containers): the workspace
 * volume persists between them, the shell's cwd and environment do not.
 */
describe('a Session served by the Docker supervisor (real API, orchestrator, Temporal, dockerd)', () => {
  let stack: Stack;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  let supervisor: Awaited<ReturnType<Stack['startSupervisor']>>;

  beforeAll(async () => {
    stack = await startStack('sesstools');
    watcher = await watchContainers(stack.docker);
    supervisor = await stack.startSupervisor();
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
  });

  it('runs the six tools in the sandbox; the workspace survives the next activation, the shell does not', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: ReturnType<typeof toolCall> | { content: any[] }) => (body: any) => {
      results.push(lastResult(body));
      return next;
    };
    stack.model.script(
      toolCall('toolu_1', 'bash', {
        command: 'mkdir -p proj && cd proj && export TURN_VAR=one && echo ready',
      }),
      // The worker contract (docs/worker-contract.md): the result is stdout, then stderr.
      step(toolCall('toolu_2', 'bash', { command: 'pwd; echo to-stderr >&2; echo "var=$TURN_VAR"' })),
      step(toolCall('toolu_3', 'write', { file_path: 'proj/notes.txt', content: 'alpha\nbeta\n' })),
      step(
        toolCall('toolu_4', 'edit', { file_path: 'proj/notes.txt', old_string: 'beta', new_string: 'gamma' }),
      ),
      step(toolCall('toolu_5', 'read', { file_path: '/workspace/proj/notes.txt', view_range: [2, 2] })),
      step(toolCall('toolu_6', 'glob', { pattern: '**/*.txt' })),
      step(toolCall('toolu_7', 'grep', { pattern: 'gam+a' })),
      step(toolCall('toolu_8', 'read', { file_path: '/etc/passwd' })),
      step({ content: [{ type: 'text', text: 'Turn one done.' }] }),
    );
    const agent = await stack.agent('coder');
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'set up the project' }] }],
      })
    ).body;

    await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    // The activation ends after the idle countdown with the worker's final forced Stop.
    const first = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');
    expect(first.map((w) => w.state)).toEqual(['stopped']);
    expect(results).toEqual([
      { text: 'ready', is_error: false },
      { text: '/workspace/proj\nvar=one\nto-stderr', is_error: false },
      { text: 'wrote 11 bytes to proj/notes.txt', is_error: false },
      { text: 'edited proj/notes.txt (1 replacement)', is_error: false },
      { text: 'gamma', is_error: false },
      { text: '/workspace/proj/notes.txt', is_error: false },
      { text: '/workspace/proj/notes.txt:2:gamma', is_error: false },
      { text: `read: path "/etc/passwd" is outside the session's working directory`, is_error: true },
    ]);

    // Second turn → a new activation in a new container on the same workspace volume.
    stack.model.script(
      toolCall('toolu_9', 'bash', { command: 'pwd; echo "var=[$TURN_VAR]"; cat /workspace/proj/notes.txt' }),
      step({ content: [{ type: 'text', text: 'Turn two done.' }] }),
    );
    await stack.ws.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'check it' }] }],
    });
    const done = await stack.until(
      s.id,
      (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2,
    );
    expect(results.at(-1)).toEqual({ text: '/workspace\nvar=[]\nalpha\ngamma', is_error: false });
    const work = await stack.untilWork(s.id, (w) => w.length === 2 && w.every((x) => x.state === 'stopped'));
    expect(work.map((w) => w.state)).toEqual(['stopped', 'stopped']);

    const toolRound = [
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'user.tool_result',
    ];
    const finish = [
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ];
    expect(done.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      ...Array(8).fill(toolRound).flat(),
      ...finish,
      'user.message',
      'session.status_running',
      ...toolRound,
      ...finish,
    ]);
    expect(done.filter((e) => e.type === 'agent.tool_use').map((e) => e.name)).toEqual([
      'bash',
      'bash',
      'write',
      'edit',
      'read',
      'glob',
      'grep',
      'read',
      'bash',
    ]);
    // Each result answers its own call, in order.
    const uses = done.filter((e) => e.type === 'agent.tool_use').map((e) => e.id);
    expect(done.filter((e) => e.type === 'user.tool_result').map((e) => e.tool_use_id)).toEqual(uses);

    // One container per activation, each removed afterwards; the Session volume remains.
    const byWork = (id: string) => watcher.seen.filter((e) => e.work === id).map((e) => e.action);
    // The Work stops from inside the container; the supervisor removes the container right after it exits.
    for (let i = 0; i < 200 && !work.every((w) => byWork(w.id).includes('destroy')); i++)
      await new Promise((r) => setTimeout(r, 100));
    for (const w of work) {
      expect(byWork(w.id)).toEqual(expect.arrayContaining(['create', 'start', 'die', 'destroy']));
    }
    // Every call ran exactly once: the second activation reconciled the answered history and re-ran nothing.
    expect(supervisor.logs().split('tool call finished').length - 1).toBe(9);
    const volume = await stack.docker.getVolume(`mango-session-${s.id.toLowerCase()}`).inspect();
    expect(volume.Name).toBe(`mango-session-${s.id.toLowerCase()}`);
  }, 240_000);

  it('always_ask: the worker holds the call until the persisted allow; a denied call never runs', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(
      toolCall('toolu_a1', 'bash', { command: ': > /workspace/allowed && echo ran' }),
      (body: any) => {
        results.push(lastResult(body));
        return toolCall('toolu_a2', 'bash', { command: ': > /workspace/denied' });
      },
      (body: any) => {
        results.push({ text: body.messages.at(-1).content[0].content, is_error: true });
        // Binary output (a NUL) still makes a storable result.
        return toolCall('toolu_a3', 'bash', { command: "ls /workspace; printf 'x\\0y'" });
      },
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    );
    const agent = await stack.agent('asker', [{ name: 'bash', permission_policy: { type: 'always_ask' } }]);
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      })
    ).body;
    const answer = async (n: number, result: 'allow' | 'deny') => {
      const list = await stack.until(
        s.id,
        (l) => l.filter((e) => e.type === 'session.status_idle').length >= n,
      );
      const idle = list.at(-1)!;
      expect(idle.stop_reason.type).toBe('requires_action');
      // Nothing was posted for the held call while it waited.
      expect(
        list.some((e) => e.type === 'user.tool_result' && e.tool_use_id === idle.stop_reason.event_ids[0]),
      ).toBe(false);
      await stack.ws.post(`/v1/sessions/${s.id}/events`, {
        events: [
          {
            type: 'user.tool_confirmation',
            tool_use_id: idle.stop_reason.event_ids[0],
            result,
            ...(result === 'deny' ? { deny_message: 'Not that one.' } : {}),
          },
        ],
      });
    };
    await answer(1, 'allow');
    await answer(2, 'deny');
    await answer(3, 'allow');
    const done = await stack.until(
      s.id,
      (l) => l.at(-1)?.type === 'session.status_idle' && l.at(-1)?.stop_reason.type === 'end_turn',
    );
    expect(results).toEqual([
      { text: 'ran', is_error: false },
      { text: 'Not that one.', is_error: true },
      { text: 'allowed\nx\ufffdy', is_error: false },
    ]);
    expect(done.filter((e) => e.type === 'user.tool_result')).toHaveLength(2);
    expect(done.map((e) => e.type).filter((t) => t.startsWith('user.'))).toEqual([
      'user.message',
      'user.tool_confirmation',
      'user.tool_result',
      'user.tool_confirmation',
      'user.tool_confirmation',
      'user.tool_result',
    ]);
  }, 240_000);
});
