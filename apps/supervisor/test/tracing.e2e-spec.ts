import { CollectedSpan, OtlpCollector, startOtlpCollector } from '@mango/testing';
import { Stack, startStack, toolCall } from './support';

/**
 * OpenTelemetry from the API request to the worker: a user.message sent with a W3C `traceparent` to apps/api
 * is one trace through the outbox relay, Temporal's interceptors (workflow and activity spans), the model
 * request and the supervisor's `mango.environment.work` span for the Work item that served the turn (the
 * trace context rides in the Work secret). Every process exports over OTLP/HTTP to a collector in this
 * test process; no token, key, prompt or tool output is in any span.
 */
describe('OpenTelemetry traces from the API to the Docker supervisor (real API, orchestrator, Temporal, dockerd)', () => {
  let collector: OtlpCollector;
  let stack: Stack;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    stack = await startStack('svtrace', {
      apiEnv: otel,
      // One turn per workflow run, so the run's `RunWorkflow` span ends (continue-as-new) and is exported.
      orchestratorEnv: { ...otel, MANGO_SESSION_TURNS_PER_RUN: '1' },
    });
    await stack.startSupervisor(otel);
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
    const wanted = ['mango.environment.work', 'RunActivity:runModelStep', 'RunWorkflow:sessionWorkflow'];
    for (let i = 0; i < 300 && !wanted.every((n) => inTrace().some((x) => x.name === n)); i++)
      await new Promise((r) => setTimeout(r, 100));
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
});
