import { MangoMetrics, startMetricsServer } from './metrics';

/**
 * The internal listener is also the liveness endpoint of the processes without an HTTP port (orchestrator,
 * supervisor): the Helm chart's probes ask `/healthz` there. It answers without collecting any metric, so a
 * slow gauge (one that queries PostgreSQL) can never make a live process look dead.
 */
describe('startMetricsServer: /healthz answers from the event loop, /metrics collects, the rest is 404', () => {
  it('answers /healthz while a gauge collection never finishes; unknown paths and methods are 404', async () => {
    const metrics = new MangoMetrics('orchestrator');
    metrics.gauge('mango_test_stuck', 'never collected', [], () => new Promise(() => undefined));
    const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
    try {
      const base = server.url.replace(/\/metrics$/, '');
      const health = await fetch(`${base}/healthz`);
      expect({ status: health.status, body: await health.json() }).toEqual({
        status: 200,
        body: { status: 'ok' },
      });
      expect((await fetch(`${base}/healthz`, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${base}/readyz`)).status).toBe(404);
      expect((await fetch(`${base}/`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
