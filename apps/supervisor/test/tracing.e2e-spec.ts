import { CollectedSpan, freePort, OtlpCollector, scrapeMetrics, startOtlpCollector } from '@mango/testing';
import { Stack, startStack, toolCall, untilFileIn, WORK_LABEL } from './support';

/**
 * OpenTelemetry from the API request to the worker: a user.message sent with a W3C `traceparent` to apps/api
 * is one trace through the outbox relay, Temporal's interceptors (workflow and activity spans), the model
 * request, the supervisor's `mango.environment.work` span for the Work item that served the turn (the
 * trace context rides in the Work secret) and, under it, the `mango.tool_use <name>` span of the tool's
 * execution inside the container (reported by the item runner, exported by the supervisor). Every process exports over OTLP/HTTP to a collector in this
 * test process; no token, key, prompt or tool output is in any span.
 */
describe('OpenTelemetry traces from the API to the Docker supervisor (real API, orchestrator, Temporal, dockerd)', () => {
  let collector: OtlpCollector;
  let stack: Stack;
  let metricsUrl: string;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    stack = await startStack('svtrace', {
      apiEnv: otel,
      // One turn per workflow run, so the run's `RunWorkflow` span ends (continue-as-new) and is exported.
      orchestratorEnv: { ...otel, MANGO_SESSION_TURNS_PER_RUN: '1' },
    });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    await stack.startSupervisor({ ...otel, MANGO_METRICS_PORT: String(metricsPort) });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await collector?.close();
  });

  it('one trace: API request → outbox → workflow → activity → model → the supervisor span of its Work', async () => {
    const agent = await stack.agent('traced');
    const s = (await stack.ws.post('/v1/sessions', { agent, environment_id: stack.envId })).body;
    stack.model.script(toolCall('toolu_tr', 'bash', { command: 'echo SECRET-TOOL-$((40+2))' }), {
      content: [{ type: 'text', text: 'SECRET-COMPLETION' }],
    });
    const traceId = '9bf92f3577b34da6a3ce929d0e0e473b';
    const sent = await stack.ws.post(
      `/v1/sessions/${s.id}/events`,
      { events: [{ type: 'user.message', content: [{ type: 'text', text: 'SECRET-PROMPT' }] }] },
      { headers: { traceparent: `00-${traceId}-50f067aa0ba902bc-01` } },
    );
    expect(sent.status).toBe(200);
    const events = await stack.until(
      s.id,
      (l) => l.some((e) => e.type === 'user.tool_result') && l.at(-1)?.type === 'session.status_idle',
    );
    const use = events.find((e) => e.type === 'agent.tool_use')!;
    expect(events.find((e) => e.type === 'user.tool_result')).toMatchObject({ tool_use_id: use.id });
    // The activation ends after the idle countdown; its span ends when the container is removed.
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');

    const inTrace = () => collector.spans.filter((x) => x.traceId === traceId);
    // Every span read below: each process exports its spans in its own batches, in any order.
    const wanted = [
      'mango.environment.work',
      'mango.outbox.dispatch',
      'SignalWithStartWorkflow:sessionWorkflow',
      'RunWorkflow:sessionWorkflow',
      'StartActivity:runModelStep',
      'RunActivity:runModelStep',
      'chat m',
    ];
    const toolSpan = () =>
      inTrace().find((x) => x.service === 'mango-supervisor' && x.name === 'mango.tool_use bash');
    const apiSpans = () =>
      inTrace().some((x) => x.service === 'mango-api' && x.kind === 2) &&
      inTrace().some((x) => x.service === 'mango-api' && x.name === 'mango.tool_use bash');
    const all = () => wanted.every((n) => inTrace().some((x) => x.name === n)) && toolSpan() && apiSpans();
    for (let i = 0; i < 300 && !all(); i++) await new Promise((r) => setTimeout(r, 100));
    const spans = inTrace();
    const named = (name: string): CollectedSpan | undefined => spans.find((x) => x.name === name);

    const server = spans.find(
      (x) => x.service === 'mango-api' && x.kind === 2 && x.name === 'POST /v1/sessions/:sessionId/events',
    )!;
    expect(server).toBeDefined();
    // API → relay → Temporal client → workflow run → activity schedule → activity, parent by parent.
    const dispatch = named('mango.outbox.dispatch')!;
    expect(dispatch).toMatchObject({ service: 'mango-orchestrator', parentSpanId: server.spanId });
    const signal = named('SignalWithStartWorkflow:sessionWorkflow')!;
    expect(signal).toMatchObject({ parentSpanId: dispatch.spanId });
    const run = named('RunWorkflow:sessionWorkflow')!;
    expect(run).toMatchObject({ parentSpanId: signal.spanId });
    const schedule = named('StartActivity:runModelStep')!;
    expect(schedule).toMatchObject({ parentSpanId: run.spanId });
    expect(named('RunActivity:runModelStep')).toMatchObject({ parentSpanId: schedule.spanId });
    expect(named('chat m')).toMatchObject({ service: 'mango-orchestrator', parentSpanId: server.spanId });

    // The worker side: the supervisor's span for the Work item, a CONSUMER (OTLP kind 5) child of the
    // request whose input the item served, with ids and the outcome only.
    const worker = named('mango.environment.work')!;
    expect(worker).toMatchObject({ service: 'mango-supervisor', kind: 5, parentSpanId: server.spanId });
    expect(worker.attributes).toEqual({
      'mango.work.id': work.id,
      'mango.work.type': 'session',
      'mango.environment.id': stack.envId,
      'mango.session.id': s.id,
      'mango.outcome': 'ok',
      'mango.work.exit_code': 0,
    });

    // The tool's own execution inside the container: a child of the Work span, inside its time window,
    // with ids, the tool's name and its outcome only (the item runner reports it, the supervisor exports).
    const executed = toolSpan()!;
    expect(executed).toMatchObject({ kind: 1, parentSpanId: worker.spanId, statusCode: 0 });
    expect(executed.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'bash',
      'gen_ai.tool.call.id': use.id,
      'mango.session.id': s.id,
      'mango.work.id': work.id,
      'mango.tool.kind': 'sandbox',
      'mango.outcome': 'ok',
    });
    expect(executed.startMs).toBeGreaterThanOrEqual(worker.startMs);
    expect(executed.endMs).toBeGreaterThanOrEqual(executed.startMs);
    expect(executed.endMs).toBeLessThanOrEqual(worker.endMs);
    // The API's span of the same call (tool use → result) is in the turn's trace too.
    expect(
      spans.find((x) => x.service === 'mango-api' && x.name === 'mango.tool_use bash')?.attributes,
    ).toMatchObject({ 'gen_ai.tool.call.id': use.id, 'mango.outcome': 'ok' });
    // No content attribute: nothing named like an input, output, argument or result on the tool spans.
    for (const t of spans.filter((x) => x.name.startsWith('mango.tool_use ')))
      expect(Object.keys(t.attributes).filter((k) => /input|output|argument|result|content/.test(k))).toEqual(
        [],
      );

    // The supervisor's /metrics (checked by promtool) observed the execution by tool, kind and outcome.
    const scrape = await scrapeMetrics(metricsUrl);
    expect(
      scrape.value('mango_tool_execution_duration_seconds_count', {
        service: 'supervisor',
        tool: 'bash',
        kind: 'sandbox',
        outcome: 'ok',
      }),
    ).toBe(1);

    // Secret canary over every span of every process: no key, token, credential or content.
    const everything = JSON.stringify(collector.spans);
    for (const secret of [
      stack.envKey,
      'sk-scripted-model-key-must-not-leak',
      'sk-model-secret-must-not-leak',
      'mango_ak_must_not_leak',
      'SECRET-PROMPT',
      'SECRET-COMPLETION',
      'SECRET-TOOL',
    ])
      expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/mango_(wt|ek|ak)_/);
  }, 240_000);

  it('a failed and an interrupted call are tool spans with their outcome (error status, interrupted)', async () => {
    const agent = await stack.agent('traced-outcomes');
    const s = (await stack.ws.post('/v1/sessions', { agent, environment_id: stack.envId })).body;
    stack.model.script(
      toolCall('toolu_tr_err', 'read', { file_path: '/workspace/no-such-file' }),
      toolCall('toolu_tr_int', 'bash', { command: ': > /workspace/started; sleep 30' }),
    );
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await stack.ws.post(
      `/v1/sessions/${s.id}/events`,
      { events: [{ type: 'user.message', content: [{ type: 'text', text: 'SECRET-PROMPT' }] }] },
      { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
    );
    // The bash call is running in the container: interrupt it.
    const [work] = await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'active');
    let containerId: string | undefined;
    for (let i = 0; i < 300 && !containerId; i++) {
      const [c] = await stack.docker.listContainers({ filters: { label: [`${WORK_LABEL}=${work.id}`] } });
      containerId = c?.Id;
      if (!containerId) await new Promise((r) => setTimeout(r, 100));
    }
    await untilFileIn(stack.docker.getContainer(containerId!), '/workspace/started');
    await stack.ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    await stack.untilWork(s.id, (w) => w[0]?.state === 'stopped');

    const toolSpans = () =>
      collector.spans.filter(
        (x) => x.service === 'mango-supervisor' && x.attributes['mango.session.id'] === s.id,
      );
    for (let i = 0; i < 300 && toolSpans().length < 3; i++) await new Promise((r) => setTimeout(r, 100));
    const worker = collector.spans.find(
      (x) => x.name === 'mango.environment.work' && x.attributes['mango.work.id'] === work.id,
    )!;
    expect(worker).toMatchObject({ traceId });
    const byName = Object.fromEntries(toolSpans().map((x) => [x.name, x]));
    expect(Object.keys(byName).sort()).toEqual([
      'mango.environment.work',
      'mango.tool_use bash',
      'mango.tool_use read',
    ]);
    expect(byName['mango.tool_use read']).toMatchObject({
      traceId,
      parentSpanId: worker.spanId,
      statusCode: 2,
    });
    expect(byName['mango.tool_use read'].attributes).toMatchObject({
      'gen_ai.tool.name': 'read',
      'mango.outcome': 'error',
      'error.type': 'tool_error',
    });
    // The interrupt cut the command short after it started: at least the time until the interrupt.
    const interrupted = byName['mango.tool_use bash'];
    expect(interrupted).toMatchObject({ traceId, parentSpanId: worker.spanId, statusCode: 0 });
    expect(interrupted.attributes).toMatchObject({
      'gen_ai.tool.name': 'bash',
      'mango.outcome': 'interrupted',
    });
    expect(interrupted.endMs - interrupted.startMs).toBeLessThan(30_000);
    // The error text of the failed read is not in any span.
    expect(JSON.stringify(collector.spans)).not.toContain('no-such-file');

    const scrape = await scrapeMetrics(metricsUrl);
    expect(
      scrape.value('mango_tool_execution_duration_seconds_count', { tool: 'read', outcome: 'error' }),
    ).toBe(1);
    expect(
      scrape.value('mango_tool_execution_duration_seconds_count', { tool: 'bash', outcome: 'interrupted' }),
    ).toBe(1);
  }, 240_000);
});
