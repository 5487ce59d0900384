import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastResult, Stack, startStack, toolCall } from './support';

/**
 * Operator custom tools (docs/operator-guide.md "Operator custom tools") through `mango-worker docker`:
 * the supervisor registers a command-backed tool from its file; a Session whose Agent declares a custom
 * tool of that name gets it run in the Session's hardened sandbox container (input as JSON on stdin) and
 * the result posted as `user.custom_tool_result` with the Work token. A custom tool the worker does not
 * know stays with the application (`requires_action`); a bad file stops the supervisor at start.
 */
describe('operator custom tools served by the Docker supervisor (real API, orchestrator, Temporal, dockerd)', () => {
  let stack: Stack;
  const dir = mkdtempSync(join(tmpdir(), 'mango-custom-tools-'));
  const file = join(dir, 'tools.yaml');
  // YAML (JSON works too). The command reads its input from stdin and reports where it ran.
  writeFileSync(
    file,
    [
      'tools:',
      '  - name: shout',
      '    description: Uppercase a text',
      '    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}',
      '    command: ["/bin/sh", "-c", "tr a-z A-Z; echo; echo \\"uid=$(id -u) cwd=$(pwd) key=${MANGO_API_KEY:-none} model=${MANGO_MODEL_API_KEY:-none}\\""]',
      '    timeout_ms: 20000',
      '  - name: broken',
      '    description: Always fails',
      '    input_schema: {type: object}',
      '    command: ["/bin/sh", "-c", "echo bad input >&2; exit 3"]',
      '',
    ].join('\n'),
  );

  beforeAll(async () => {
    stack = await startStack('customtools');
    await stack.startSupervisor({ MANGO_WORKER_CUSTOM_TOOLS: file });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a bad custom tools file at start, naming the entry and field', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        tools: [{ name: 'x', description: 'd', input_schema: { type: 'object' }, command: ['rel/path'] }],
      }),
    );
    await expect(
      stack.startSupervisor({ MANGO_WORKER_CUSTOM_TOOLS: bad, MANGO_SUPERVISOR_ID: 'bad-config' }),
    ).rejects.toThrow(/tools\[0\]\.command\[0\] must be an absolute path/);
  }, 60_000);

  it('runs a registered tool in the sandbox and posts its result with the Work token; an unknown one stays with the application', async () => {
    const seen: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: ReturnType<typeof toolCall> | { content: any[] }) => (body: any) => {
      seen.push(lastResult(body));
      return next;
    };
    stack.model.script(
      toolCall('toolu_c1', 'shout', { text: 'hello sandbox' }),
      step(toolCall('toolu_c2', 'broken', {})),
      step(toolCall('toolu_c3', 'crm_lookup', { id: 'A-1' })),
      step({ content: [{ type: 'text', text: 'All done.' }] }),
    );
    const custom = (name: string) => ({
      type: 'custom',
      name,
      description: `the ${name} tool`,
      input_schema: { type: 'object', properties: {} },
    });
    const agent = (
      await stack.ws.post('/v1/agents', {
        name: `custom-${Date.now()}`,
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }, custom('shout'), custom('broken'), custom('crm_lookup')],
      })
    ).body.id as string;
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'shout it' }] }],
      })
    ).body;

    // The worker answers shout and broken; crm_lookup is nobody's but the application's.
    // (Each custom call idles the Session `requires_action` until it is answered.)
    const waiting = await stack.until(s.id, (l) => {
      const crm = l.find((e) => e.type === 'agent.custom_tool_use' && e.name === 'crm_lookup');
      return l.some((e) => e.type === 'session.status_idle' && e.stop_reason?.event_ids?.includes(crm?.id));
    });
    const uses = waiting.filter((e) => e.type === 'agent.custom_tool_use');
    expect(uses.map((e) => e.name)).toEqual(['shout', 'broken', 'crm_lookup']);
    const results = waiting.filter((e) => e.type === 'user.custom_tool_result');
    expect(results.map((e) => e.custom_tool_use_id)).toEqual([uses[0]!.id, uses[1]!.id]);
    expect(results[0]).toMatchObject({
      is_error: false,
      content: [
        {
          type: 'text',
          text: '{"TEXT":"HELLO SANDBOX"}\nuid=1000 cwd=/workspace key=none model=none\n',
        },
      ],
    });
    expect(results[1]).toMatchObject({ is_error: true });
    expect(results[1].content[0].text).toBe('Error: broken exited with code 3\nbad input\n');
    expect(seen).toEqual([
      { text: '{"TEXT":"HELLO SANDBOX"}\nuid=1000 cwd=/workspace key=none model=none\n', is_error: false },
      { text: 'Error: broken exited with code 3\nbad input\n', is_error: true },
    ]);
    expect(waiting.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [uses[2]!.id] });

    // Still unanswered a while later: the worker leaves a tool it does not know to the application.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await stack.events(s.id)).filter((e) => e.type === 'user.custom_tool_result')).toHaveLength(2);
    await stack.ws.post(`/v1/sessions/${s.id}/events`, {
      events: [
        {
          type: 'user.custom_tool_result',
          custom_tool_use_id: uses[2]!.id,
          content: [{ type: 'text', text: 'A-1: shipped' }],
        },
      ],
    });
    const done = await stack.until(s.id, (l) =>
      l.some((e) => e.type === 'session.status_idle' && e.stop_reason?.type === 'end_turn'),
    );
    expect(seen.at(-1)).toEqual({ text: 'A-1: shipped', is_error: false });
    expect(done.find((e) => e.type === 'agent.message')!.content[0].text).toBe('All done.');
    // The model was offered the Agent's custom tools (the worker adds nothing to the declaration).
    expect(
      stack.model.requests
        .at(-1)!
        .body.tools.map((t: { name: string }) => t.name)
        .filter((n: string) => ['shout', 'broken', 'crm_lookup'].includes(n)),
    ).toEqual(['shout', 'broken', 'crm_lookup']);
  }, 240_000);
});
