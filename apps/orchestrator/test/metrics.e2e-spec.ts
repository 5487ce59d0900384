import { decodeWorkSecret } from '@mango/feature-work';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';
import {
  ApiUnderTest,
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  MetricsScrape,
  scrapeMetrics,
  ScriptedModelServer,
} from '@mango/testing';

/**
 * Prometheus metrics of real processes (apps/api and apps/orchestrator with MANGO_METRICS_PORT, Temporal,
 * the scripted model, a raw-HTTP worker): every scrape is checked by `promtool check metrics`, and the
 * queue, claim, lease, turn, model, tool, stream and outbox metrics move as one Session's work runs.
 */
describe('Prometheus /metrics across real processes', () => {
  let api: ApiUnderTest;
  let apiMetrics: string;
  let orchestrator: AppProcess;
  let orchestratorMetrics: string;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let wsKey: string;
  let envId: string;
  let supervisor: HttpClient;
  let stack: SessionStack;

  beforeAll(async () => {
    const apiPort = await freePort();
    const orchestratorPort = await freePort();
    stack = await startSessionStack('metrics', {
      apiEnv: { MANGO_METRICS_PORT: String(apiPort) },
      orchestratorEnv: {
        MANGO_METRICS_PORT: String(orchestratorPort),
        MANGO_MODEL_PRICES: JSON.stringify({ m: { input: 3, output: 15 } }),
      },
      environment: true,
    });
    ({ api, orchestrator, model, ws, key: wsKey } = stack);
    apiMetrics = `http://127.0.0.1:${apiPort}/metrics`;
    orchestratorMetrics = `http://127.0.0.1:${orchestratorPort}/metrics`;
    envId = stack.environmentId!;
    supervisor = stack.supervisor!;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, label: string): Promise<T> {
    let last: T | undefined;
    for (let i = 0; i < 300; i++) {
      last = await what();
      if (ok(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${label}: last value ${JSON.stringify(last)}`);
  }
  const scrapeUntil = (url: string, ok: (s: MetricsScrape) => boolean, label: string) =>
    until(() => scrapeMetrics(url), ok, label);

  it('every app logs its metrics URL and serves /metrics only on the metrics port', async () => {
    expect(orchestrator.logs()).toContain(orchestratorMetrics);
    // The public API port has no /metrics route.
    expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
    const first = await scrapeMetrics(apiMetrics);
    expect(first.value('mango_process_start_time_seconds', { service: 'api' })).toBeGreaterThan(0);
    expect((await scrapeMetrics(orchestratorMetrics)).value('mango_session_turns_running')).toBe(0);
  });

  it('queue, claim, lease expiry, turn, model, tool, stream and outbox metrics follow one Session', async () => {
    model.script(
      {
        content: [{ type: 'tool_use', id: 'toolu_m', name: 'bash', input: { command: 'echo hi' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 1000, output_tokens: 200 },
      },
      { content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 1500, output_tokens: 100 } },
    );
    const agent = (
      await ws.post('/v1/agents', { name: 'coder', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
    ).body.id;
    const before = await scrapeMetrics(apiMetrics);
    expect(before.value('mango_work_queue_depth', { environment_id: envId })).toBeUndefined();
    const s = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run echo hi' }] }],
      })
    ).body;

    // An open event stream is counted while it is open.
    const stream = new AbortController();
    const opened = await fetch(`${api.url}/v1/sessions/${s.id}/events/stream`, {
      headers: { authorization: `Bearer ${wsKey}`, accept: 'text/event-stream' },
      signal: stream.signal,
    });
    expect(opened.status).toBe(200);
    await scrapeUntil(apiMetrics, (m) => m.value('mango_sse_streams_open') === 1, 'one stream open');

    // The model asked for bash: the Session Work is queued and the turn is running.
    const queued = await scrapeUntil(
      apiMetrics,
      (m) => m.value('mango_work_queue_depth', { environment_id: envId }) === 1,
      'Session Work queued',
    );
    expect(
      queued.value('mango_work_queue_oldest_age_seconds', { environment_id: envId }),
    ).toBeGreaterThanOrEqual(0);
    await scrapeUntil(
      orchestratorMetrics,
      (m) => m.value('mango_session_turns_running') === 1,
      'turn running',
    );

    // A worker claims it, lets a 1-second lease run out, and a second Poll reclaims it.
    const first = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(first.body.data).toEqual({ type: 'session', id: s.id });
    const claimed = await scrapeMetrics(apiMetrics);
    // Claimed but not yet acknowledged: still queued, no longer counted as waiting.
    expect(claimed.value('mango_work_queue_depth', { environment_id: envId })).toBe(0);
    expect(
      claimed.value('mango_work_claims_total', {
        environment_id: envId,
        work_type: 'session',
        reclaim: 'none',
      }),
    ).toBe(1);
    await supervisor.post(`/v1/environments/${envId}/work/${first.body.id}/ack`);
    const firstToken = httpClient(api.url, decodeWorkSecret(first.body.secret).sessions_token);
    expect(
      (
        await firstToken.post(
          `/v1/environments/${envId}/work/${first.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT&desired_ttl_seconds=1`,
        )
      ).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    const second = await supervisor.get(`/v1/environments/${envId}/work/poll?block_ms=20000`);
    expect(second.body.id).toBe(first.body.id);
    const reclaimed = await scrapeMetrics(apiMetrics);
    expect(
      reclaimed.value('mango_work_claims_total', { environment_id: envId, reclaim: 'lease_expired' }),
    ).toBe(1);
    expect(
      reclaimed.value('mango_work_lease_expiries_total', { environment_id: envId, work_type: 'session' }),
    ).toBe(1);

    // The second activation runs the call and posts its result; the model finishes.
    await supervisor.post(`/v1/environments/${envId}/work/${second.body.id}/ack`);
    const worker = httpClient(api.url, decodeWorkSecret(second.body.secret).sessions_token);
    await worker.post(
      `/v1/environments/${envId}/work/${second.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const use = (
      await until(
        async () => (await ws.get(`/v1/sessions/${s.id}/events?limit=1000`)).body.data as Array<any>,
        (list) => list.some((e) => e.type === 'agent.tool_use'),
        'tool use',
      )
    ).find((e) => e.type === 'agent.tool_use');
    const posted = await worker.post(`/v1/sessions/${s.id}/events`, {
      events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(posted.status).toBe(200);

    const done = await scrapeUntil(
      orchestratorMetrics,
      (m) => m.value('mango_session_turn_duration_seconds_count', { stop_reason: 'end_turn' }) === 1,
      'turn ended',
    );
    expect(done.value('mango_session_turns_running')).toBe(0);
    expect(
      done.value('mango_session_turn_duration_seconds_sum', { stop_reason: 'end_turn' }),
    ).toBeGreaterThan(1);
    expect(done.value('mango_model_request_duration_seconds_count', { model: 'm', outcome: 'ok' })).toBe(2);
    expect(done.value('mango_model_tokens_total', { model: 'm', type: 'input' })).toBe(2500);
    expect(done.value('mango_model_tokens_total', { model: 'm', type: 'output' })).toBe(300);
    // 2,500 × $3/M + 300 × $15/M = $0.012, counted like the Session's usage.list_cost (whole cents, rounded up).
    const usage = (await ws.get(`/v1/sessions/${s.id}`)).body.usage;
    expect(usage.list_cost).toEqual({ amount: '2', currency: 'USD' });
    expect(done.value('mango_model_list_cost_usd_total', { model: 'm' })).toBeCloseTo(0.02, 5);
    // user.message and user.tool_result went through the outbox.
    expect(done.value('mango_outbox_dispatch_lag_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(done.value('mango_outbox_pending')).toBe(0);
    expect(done.value('mango_outbox_lag_seconds')).toBe(0);

    const apiDone = await scrapeMetrics(apiMetrics);
    expect(
      apiDone.value('mango_tool_call_duration_seconds_count', {
        tool: 'bash',
        kind: 'sandbox',
        outcome: 'ok',
      }),
    ).toBe(1);
    // HTTP latency is labelled by route template, never by the raw path with its ids.
    expect(
      apiDone.value('mango_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/sessions/:sessionId/events',
        status_code: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(apiDone.text).not.toContain(s.id);
    expect((await fetch(`${api.url}/v1/no-such-route`)).status).toBe(404);
    expect(
      (await scrapeMetrics(apiMetrics)).value('mango_http_request_duration_seconds_count', {
        route: 'unmatched',
        status_code: '404',
      }),
    ).toBeGreaterThanOrEqual(1);

    stream.abort();
    await scrapeUntil(apiMetrics, (m) => m.value('mango_sse_streams_open') === 0, 'stream closed');
  }, 180_000);
});
