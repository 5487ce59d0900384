import { MangoMetrics, MetricsServer, startMetricsServer } from '@mango/platform-metrics';
import { scrapeMetrics } from './metrics-scrape';

/** The shared metrics module over a real listener, checked by promtool (what every app's /metrics serves). */

describe('MangoMetrics and the metrics listener', () => {
  let metrics: MangoMetrics;
  let server: MetricsServer;
  let depth: number | Error;

  beforeAll(async () => {
    metrics = new MangoMetrics('api');
    metrics.gauge('mango_work_queue_depth', 'Queued Work.', ['environment_id'], async () => {
      if (depth instanceof Error) throw depth;
      return [{ labels: { environment_id: 'env_a' }, value: depth }];
    });
    server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.close());

  it('serves a promtool-clean exposition with every Mango metric, the service label and route templates', async () => {
    depth = 3;
    metrics.httpRequestDuration.observe(
      { method: 'GET', route: '/v1/sessions/:id', status_code: '200' },
      0.02,
    );
    metrics.workClaims.inc({ environment_id: 'env_a', work_type: 'session', reclaim: 'none' });
    const scrape = await scrapeMetrics(server.url);
    expect(scrape.names()).toEqual(
      expect.arrayContaining([
        'mango_http_request_duration_seconds',
        'mango_work_claims_total',
        'mango_work_lease_expiries_total',
        'mango_work_queue_depth',
        'mango_session_turn_duration_seconds',
        'mango_model_request_duration_seconds',
        'mango_model_tokens_total',
        'mango_model_list_cost_usd_total',
        'mango_tool_call_duration_seconds',
        'mango_tool_execution_duration_seconds',
        'mango_outbox_dispatch_lag_seconds',
        'mango_background_loop_failing',
        'mango_background_loop_recoveries_total',
        'mango_container_starts_total',
        'mango_container_failures_total',
        'mango_process_cpu_seconds_total',
      ]),
    );
    // prom-client's three `…_total` gauges break the naming convention and are left out.
    expect(scrape.names()).not.toContain('mango_nodejs_active_handles_total');
    expect(
      scrape.value('mango_http_request_duration_seconds_count', {
        route: '/v1/sessions/:id',
        service: 'api',
      }),
    ).toBe(1);
    expect(scrape.value('mango_work_queue_depth', { environment_id: 'env_a' })).toBe(3);
    depth = 5;
    expect((await scrapeMetrics(server.url)).value('mango_work_queue_depth')).toBe(5);
  });

  it('a gauge whose read fails has no series for that scrape, and the rest is still served', async () => {
    depth = new Error('database down');
    const scrape = await scrapeMetrics(server.url);
    expect(scrape.value('mango_work_queue_depth')).toBeUndefined();
    expect(scrape.value('mango_work_claims_total')).toBe(1);
  });

  it('answers only GET/HEAD /metrics', async () => {
    const base = server.url.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/v1/sessions`)).status).toBe(404);
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(404);
    expect((await fetch(server.url, { method: 'HEAD' })).status).toBe(200);
  });

  it('two apps in one process keep separate registries', async () => {
    const other = new MangoMetrics('orchestrator');
    other.workClaims.inc({ environment_id: 'env_b', work_type: 'session', reclaim: 'none' }, 7);
    const scrape = await scrapeMetrics(server.url);
    expect(scrape.value('mango_work_claims_total', { environment_id: 'env_b' })).toBeUndefined();
  });
});
