import { randomBytes } from 'node:crypto';
import { recordHistory, SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';
import {
  ApiUnderTest,
  CollectedSpan,
  OtlpCollector,
  startOtlpCollector,
  freePort,
  httpClient,
  HttpClient,
  McpTestServer,
  scrapeMetrics,
  ScriptedModelServer,
  startMcpTestServer,
} from '@mango/testing';

const KEYRING = `tracing:${randomBytes(32).toString('base64')}`;
const MCP_TOKEN = `SECRET-MCP-TOKEN-${randomBytes(8).toString('hex')}`;

/**
 * OpenTelemetry across real processes: a request with a W3C `traceparent` to apps/api, the outbox hand-off
 * and the model request in apps/orchestrator land in one trace; attributes follow gen_ai.* and carry no
 * content or credential.
 */
describe('OpenTelemetry traces across real processes (api, orchestrator, Temporal, scripted model)', () => {
  let api: ApiUnderTest;
  let model: ScriptedModelServer;
  let collector: OtlpCollector;
  let ws: HttpClient;
  let key: string;
  let mcp: McpTestServer;
  let stack: SessionStack;
  let orchestratorMetrics: string;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    mcp = await startMcpTestServer([MCP_TOKEN]);
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    const metricsPort = await freePort();
    orchestratorMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
    stack = await startSessionStack('tracing', {
      apiEnv: { ...otel, MANGO_VAULT_KEYRING: KEYRING },
      orchestratorEnv: {
        ...otel,
        MANGO_VAULT_KEYRING: KEYRING,
        MANGO_MCP_ALLOWED_ADDRESSES: '127.0.0.1/32',
        MANGO_METRICS_PORT: String(metricsPort),
        // One turn per workflow run: the run (and its `RunWorkflow` span, exported when it ends) finishes
        // with each turn by continuing as new.
        MANGO_SESSION_TURNS_PER_RUN: '1',
      },
    });
    ({ api, model, ws, key } = stack);
  }, STACK_TIMEOUT_MS);

  afterAll(async () => {
    await stack?.close();
    await mcp?.stop();
    await collector?.close();
  });

  it('one trace from the API request through the outbox to the model request and the turn', async () => {
    const agent = (await ws.post('/v1/agents', { name: 'chat', model: 'm' })).body.id;
    const envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const s = (await ws.post('/v1/sessions', { agent, environment_id: envId })).body;
    model.script({
      content: [{ type: 'text', text: 'SECRET-COMPLETION' }],
      usage: { input_tokens: 12, output_tokens: 7 },
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const sent = await ws.post(
      `/v1/sessions/${s.id}/events`,
      { events: [{ type: 'user.message', content: [{ type: 'text', text: 'SECRET-PROMPT' }] }] },
      { headers: { traceparent: `00-${traceId}-${parentId}-01` } },
    );
    expect(sent.status).toBe(200);
    // The stored trace context is internal: it never appears on the wire.
    expect(JSON.stringify(sent.body)).not.toContain(traceId);

    const inTrace = () => collector.spans.filter((x) => x.traceId === traceId);
    const wanted = ['mango.session.turn', 'RunWorkflow:sessionWorkflow', 'RunActivity:runModelStep'];
    // Each process exports its spans in its own batches: the API's SERVER span can come after the rest.
    const apiServer = () => inTrace().some((x) => x.service === 'mango-api' && x.kind === 2);
    for (
      let i = 0;
      i < 300 && !(apiServer() && wanted.every((n) => inTrace().some((x) => x.name === n)));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const spans = inTrace();

    const server = spans.find((x) => x.service === 'mango-api' && x.kind === 2)!;
    expect(server).toMatchObject({
      name: 'POST /v1/sessions/:sessionId/events',
      parentSpanId: parentId,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/sessions/:sessionId/events',
        'http.response.status_code': 200,
      },
    });
    const dispatch = spans.find((x) => x.name === 'mango.outbox.dispatch')!;
    expect(dispatch).toMatchObject({ service: 'mango-orchestrator', parentSpanId: server.spanId });
    expect(dispatch.attributes).toMatchObject({
      'mango.session.id': s.id,
      'mango.event.kind': 'user.message',
    });
    const chat = spans.find((x) => x.name === 'chat m')!;
    expect(chat).toMatchObject({ service: 'mango-orchestrator', parentSpanId: server.spanId, kind: 3 });
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'm',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      'mango.session.id': s.id,
    });
    const turn = spans.find((x) => x.name === 'mango.session.turn')!;
    expect(turn).toMatchObject({ service: 'mango-orchestrator', parentSpanId: server.spanId });
    expect(turn.attributes).toMatchObject({ 'mango.stop_reason': 'end_turn' });

    // Temporal's interceptors continue the same trace: the relay's signal-with-start (client), the
    // workflow run it started and its activity schedule (workflow sandbox, through the sink), and the
    // activity execution (worker), each the child of the one before.
    const signal = spans.find((x) => x.name === 'SignalWithStartWorkflow:sessionWorkflow')!;
    expect(signal).toMatchObject({ service: 'mango-orchestrator', parentSpanId: dispatch.spanId });
    expect(signal.attributes).toMatchObject({ temporalWorkflowId: s.id });
    const run = spans.find((x) => x.name === 'RunWorkflow:sessionWorkflow')!;
    expect(run).toMatchObject({ service: 'mango-orchestrator', parentSpanId: signal.spanId });
    expect(run.attributes).toMatchObject({ temporalWorkflowId: s.id });
    expect(typeof run.attributes.run_id).toBe('string');
    const schedule = spans.find((x) => x.name === 'StartActivity:runModelStep')!;
    expect(schedule).toMatchObject({ service: 'mango-orchestrator', parentSpanId: run.spanId });
    const activity = spans.find((x) => x.name === 'RunActivity:runModelStep')!;
    expect(activity).toMatchObject({ service: 'mango-orchestrator', parentSpanId: schedule.spanId });
    expect(activity.attributes).toMatchObject({ temporalWorkflowId: s.id });
    // The run ends by continuing as new (one turn per run here), in the same trace.
    expect(spans.find((x) => x.name === 'ContinueAsNew:sessionWorkflow')).toMatchObject({
      parentSpanId: run.spanId,
    });
    // A run traced end to end (trace context in its start and activity headers) as a replay fixture.
    await recordHistory(s.id, 'session-traced-turn', String(run.attributes.run_id));

    // Content off: no prompt, completion or credential in any span of any trace.
    const everything = JSON.stringify(collector.spans);
    for (const secret of ['SECRET-PROMPT', 'SECRET-COMPLETION', key, 'sk-scripted-model-key'])
      expect(everything).not.toContain(secret);
  }, 120_000);

  it('a tool call is a `mango.tool_use <name>` span in the trace of its turn', async () => {
    const agent = (
      await ws.post('/v1/agents', {
        name: 'tools',
        model: 'm',
        tools: [
          {
            type: 'custom',
            name: 'lookup_order',
            description: 'Looks up an order.',
            input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          },
        ],
      })
    ).body.id;
    const envId = (await ws.post('/v1/environments', { name: 'tools' })).body.id;
    const s = (await ws.post('/v1/sessions', { agent, environment_id: envId })).body;
    model.script(
      {
        content: [
          { type: 'tool_use', id: 'toolu_t', name: 'lookup_order', input: { order: 'SECRET-INPUT' } },
        ],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Shipped.' }] },
    );
    const traceId = '6bf92f3577b34da6a3ce929d0e0e4738';
    await ws.post(
      `/v1/sessions/${s.id}/events`,
      { events: [{ type: 'user.message', content: [{ type: 'text', text: 'where is my order?' }] }] },
      { headers: { traceparent: `00-${traceId}-20f067aa0ba902b9-01` } },
    );
    let use: Record<string, any> | undefined;
    for (let i = 0; i < 300 && !use; i++) {
      const list = (await ws.get(`/v1/sessions/${s.id}/events?limit=1000`)).body.data as Array<
        Record<string, any>
      >;
      use = list.find((e) => e.type === 'agent.custom_tool_use');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The application answers from another trace of its own; the call's span stays in the turn's trace.
    await ws.post(
      `/v1/sessions/${s.id}/events`,
      {
        events: [
          {
            type: 'user.custom_tool_result',
            custom_tool_use_id: use!.id,
            content: [{ type: 'text', text: 'SECRET-OUTPUT' }],
          },
        ],
      },
      { headers: { traceparent: '00-7bf92f3577b34da6a3ce929d0e0e4739-30f067aa0ba902ba-01' } },
    );
    let span: CollectedSpan | undefined;
    for (let i = 0; i < 100 && !span; i++) {
      span = collector.spans.find((x) => x.name === 'mango.tool_use lookup_order');
      await new Promise((r) => setTimeout(r, 100));
    }
    const server = collector.spans.find(
      (x) => x.traceId === traceId && x.kind === 2 && x.name === 'POST /v1/sessions/:sessionId/events',
    )!;
    expect(span).toMatchObject({ service: 'mango-api', traceId, parentSpanId: server.spanId });
    expect(span!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup_order',
      'gen_ai.tool.call.id': use!.id,
      'mango.session.id': s.id,
      'mango.tool.kind': 'custom',
      'mango.outcome': 'ok',
    });
    const everything = JSON.stringify(collector.spans);
    expect(everything).not.toContain('SECRET-INPUT');
    expect(everything).not.toContain('SECRET-OUTPUT');
  }, 120_000);

  it("an MCP tool call is a `mango.mcp_tool_use <tool>` client span of the orchestrator in its turn's trace", async () => {
    const vault = (await ws.post('/v1/vaults', { display_name: 'tracing' })).body.id;
    const cred = await ws.post(`/v1/vaults/${vault}/credentials`, {
      auth: { type: 'static_bearer', mcp_server_url: mcp.url, token: MCP_TOKEN },
    });
    expect(cred.status).toBe(201);
    const agent = (
      await ws.post('/v1/agents', {
        name: 'mcp',
        model: 'm',
        mcp_servers: [{ type: 'url', name: 'tickets', url: mcp.url }],
        tools: [{ type: 'mcp_toolset', mcp_server_name: 'tickets' }],
      })
    ).body.id;
    const envId = (await ws.post('/v1/environments', { name: 'mcp' })).body.id;
    const s = (await ws.post('/v1/sessions', { agent, environment_id: envId, vault_ids: [vault] })).body;
    model.script(
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_m',
            name: 'mcp__tickets__echo',
            input: { text: 'SECRET-MCP-INPUT' },
          },
        ],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Echoed.' }] },
    );
    const traceId = '8bf92f3577b34da6a3ce929d0e0e473a';
    await ws.post(
      `/v1/sessions/${s.id}/events`,
      { events: [{ type: 'user.message', content: [{ type: 'text', text: 'echo it' }] }] },
      { headers: { traceparent: `00-${traceId}-40f067aa0ba902bb-01` } },
    );
    // The span is exported when the MCP call returns, which can be before the result event is committed:
    // wait for both (a CI run under load read the events between the two).
    let span: CollectedSpan | undefined;
    let list: Array<Record<string, any>> = [];
    for (let i = 0; i < 300; i++) {
      span = collector.spans.find((x) => x.name === 'mango.mcp_tool_use echo');
      list = (await ws.get(`/v1/sessions/${s.id}/events?limit=1000`)).body.data as Array<Record<string, any>>;
      if (span && list.some((e) => e.type === 'agent.mcp_tool_result')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const use = list.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(list.find((e) => e.type === 'agent.mcp_tool_result')).toMatchObject({ is_error: false });
    const server = collector.spans.find(
      (x) => x.traceId === traceId && x.kind === 2 && x.name === 'POST /v1/sessions/:sessionId/events',
    )!;
    // SpanKind.CLIENT is 3 in OTLP; the parent is the request that started the turn.
    expect(span).toMatchObject({
      service: 'mango-orchestrator',
      traceId,
      kind: 3,
      parentSpanId: server.spanId,
    });
    expect(span!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': use.id,
      'mango.session.id': s.id,
      'mango.tool.kind': 'mcp',
      'mango.mcp.server.name': 'tickets',
      'mango.outcome': 'ok',
    });
    const everything = JSON.stringify(collector.spans);
    for (const secret of ['SECRET-MCP-INPUT', 'echo: SECRET', MCP_TOKEN, mcp.url])
      expect(everything).not.toContain(secret);
    // The call's duration by tool, kind and outcome on the orchestrator's /metrics (checked by promtool).
    const scrape = await scrapeMetrics(orchestratorMetrics);
    expect(
      scrape.value('mango_tool_execution_duration_seconds_count', {
        service: 'orchestrator',
        tool: 'echo',
        kind: 'mcp',
        outcome: 'ok',
      }),
    ).toBe(1);
  }, 120_000);

  it('Work claims are spans under the Poll request', async () => {
    const envId = (await ws.post('/v1/environments', { name: 'claims' })).body.id;
    const supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const work = (await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } })).body;
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4737';
    const polled = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=5000`, {
      headers: { traceparent: `00-${traceId}-10f067aa0ba902b8-01` },
    });
    expect(polled.body.id).toBe(work.id);
    let claim: CollectedSpan | undefined;
    for (let i = 0; i < 100 && !claim; i++) {
      claim = collector.spans.find((x) => x.traceId === traceId && x.name === 'mango.environment.work.claim');
      await new Promise((r) => setTimeout(r, 100));
    }
    const poll = collector.spans.find((x) => x.traceId === traceId && x.kind === 2)!;
    expect(claim).toMatchObject({ parentSpanId: poll.spanId });
    expect(claim!.attributes).toEqual({
      'mango.environment.id': envId,
      'mango.work.id': work.id,
      'mango.work.type': 'healthcheck',
      'mango.work.reclaim': 'none',
    });
    expect(JSON.stringify(collector.spans)).not.toContain(polled.body.secret);
  }, 60_000);
});
