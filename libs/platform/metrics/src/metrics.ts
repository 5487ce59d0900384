import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Buckets (seconds) for request-sized work: 5 ms … 30 s. */
const FAST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets (seconds) for turns, model requests and tool calls: 50 ms … 1 h. */
const SLOW_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

export type MangoService = 'api' | 'files' | 'orchestrator' | 'supervisor';

/**
 * Every Prometheus metric Mango exports, one instance per app process (its own registry, so several
 * apps in one test process never collide). Each app updates the metrics of the work it does and leaves
 * the others without series; names and labels are documented in docs/operator-guide.md (Metrics).
 * Label values are bounded: route templates (never raw paths), Environment ids, model ids, tool names.
 */
export class MangoMetrics {
  readonly registry = new Registry();

  /** HTTP latency by route template (`/v1/sessions/:id`); `unmatched` for requests no route took. */
  readonly httpRequestDuration = new Histogram({
    name: 'mango_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  /**
   * Bytes of request bodies the JSON body parser read, never inflated (compressed bodies are refused)
   * and only for requests that authenticated first: what authenticated clients made the server parse.
   */
  readonly httpRequestBodyBytes = new Counter({
    name: 'mango_http_request_body_bytes_total',
    help: 'Bytes of JSON request bodies read and parsed (only after the request authenticated).',
    registers: [this.registry],
  });

  /** Work claims made by Poll, by whether the item was fresh or reclaimed. */
  readonly workClaims = new Counter({
    name: 'mango_work_claims_total',
    help: 'Work items claimed by Poll, by Environment, Work type and reclaim (none, tentative, lease_expired).',
    labelNames: ['environment_id', 'work_type', 'reclaim'] as const,
    registers: [this.registry],
  });

  /** Starting/active leases that ran out and were reclaimed by a later Poll. */
  readonly workLeaseExpiries = new Counter({
    name: 'mango_work_lease_expiries_total',
    help: 'Starting or active Work leases that expired and were reclaimed by Poll, by Environment and Work type.',
    labelNames: ['environment_id', 'work_type'] as const,
    registers: [this.registry],
  });

  /** Wall time of a Session turn, status_running → status_idle. */
  readonly turnDuration = new Histogram({
    name: 'mango_session_turn_duration_seconds',
    help: 'Session turn wall time from session.status_running to session.status_idle, by stop reason.',
    labelNames: ['stop_reason'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });

  readonly modelRequestDuration = new Histogram({
    name: 'mango_model_request_duration_seconds',
    help: 'Model endpoint request duration by model and outcome (ok, error, cancelled).',
    labelNames: ['model', 'outcome'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: 'mango_model_tokens_total',
    help: 'Model tokens recorded in Session usage, by model and type (input, output, cache_read, cache_creation).',
    labelNames: ['model', 'type'] as const,
    registers: [this.registry],
  });

  readonly modelListCost = new Counter({
    name: 'mango_model_list_cost_usd_total',
    help: 'List cost (USD, at the operator or built-in price list) of recorded model usage, by model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  /** From the tool-use event to its result (includes any wait for an approval). */
  readonly toolCallDuration = new Histogram({
    name: 'mango_tool_call_duration_seconds',
    help: 'Tool call duration from agent tool use to its result, by tool, kind (sandbox, custom) and outcome (ok, error).',
    labelNames: ['tool', 'kind', 'outcome'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });

  /**
   * A tool's own execution: inside the sandbox (the supervisor, from its item runner's reports: ADR 0018)
   * or an MCP server's call (the orchestrator), without the approval wait or the result's delivery that
   * `mango_tool_call_duration_seconds` includes.
   */
  readonly toolExecutionDuration = new Histogram({
    name: 'mango_tool_execution_duration_seconds',
    help: 'Tool execution time (in the sandbox, or the MCP call), by tool, kind (sandbox, custom, mcp) and outcome (ok, error, interrupted).',
    labelNames: ['tool', 'kind', 'outcome'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });

  /** How long outbox rows waited before the relay dispatched them. */
  readonly outboxDispatchLag = new Histogram({
    name: 'mango_outbox_dispatch_lag_seconds',
    help: 'Time from an outbox row being written to the relay dispatching it.',
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  /**
   * Background loops (the outbox and webhook relays, the Session sweeper): 1 while a loop's passes fail
   * (its database or Temporal is unreachable), 0 while they succeed; the recoveries count each return.
   */
  readonly backgroundLoopFailing = new Gauge({
    name: 'mango_background_loop_failing',
    help: "1 while a background loop's passes fail (a dependency is unreachable), 0 while they succeed, by loop.",
    labelNames: ['loop'] as const,
    registers: [this.registry],
  });

  readonly backgroundLoopRecoveries = new Counter({
    name: 'mango_background_loop_recoveries_total',
    help: "Times a background loop's passes succeeded again after failing, by loop.",
    labelNames: ['loop'] as const,
    registers: [this.registry],
  });

  /** Records a background loop's state: `running` once at start, then `failing` and `recovered` as they happen. */
  backgroundLoop(loop: string, state: 'running' | 'failing' | 'recovered'): void {
    this.backgroundLoopFailing.set({ loop }, state === 'failing' ? 1 : 0);
    if (state === 'recovered') this.backgroundLoopRecoveries.inc({ loop });
    else if (state === 'running') this.backgroundLoopRecoveries.inc({ loop }, 0);
  }

  /**
   * Requests refused with 429 by a fair-use limit (docs/operator-guide.md "Fair use"): `limit` is
   * requests, streams or running_sessions; `scope` is credential or workspace.
   */
  readonly fairUseRefusals = new Counter({
    name: 'mango_fair_use_refusals_total',
    help: 'Requests refused with 429 by a fair-use limit, by limit (requests, streams, running_sessions) and scope (credential, workspace).',
    labelNames: ['limit', 'scope'] as const,
    registers: [this.registry],
  });

  readonly containerStarts = new Counter({
    name: 'mango_container_starts_total',
    help: 'Work item containers the supervisor launched, by Work type.',
    labelNames: ['work_type'] as const,
    registers: [this.registry],
  });

  readonly containerFailures = new Counter({
    name: 'mango_container_failures_total',
    help: 'Work item containers that failed, by Work type and reason (launch_error, exit_nonzero, timeout).',
    labelNames: ['work_type', 'reason'] as const,
    registers: [this.registry],
  });

  constructor(readonly service: MangoService) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: 'mango_' });
    // prom-client names three gauges `…_total`, which the exposition conventions (and promtool) reserve
    // for counters: they are left out.
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total'])
      this.registry.removeSingleMetric(`mango_nodejs_${name}`);
  }

  /**
   * A gauge read at scrape time (queue depth from PostgreSQL, open streams from memory). A failing read
   * leaves the gauge without series for that scrape rather than failing the whole scrape.
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<Array<{ labels?: Partial<Record<L, string>>; value: number }>>,
  ): Gauge<L> {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        let samples: Array<{ labels?: Partial<Record<L, string>>; value: number }>;
        try {
          samples = await read();
        } catch {
          return;
        }
        for (const s of samples) {
          if (s.labels) this.set(s.labels, s.value);
          else this.set(s.value);
        }
      },
    });
  }

  /** The text exposition of every metric (what `/metrics` serves). */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The internal metrics listener: `GET /metrics` on its own host/port (never the public API port, so no
 * ingress route reaches it unless an operator adds one), and `GET /healthz`, the liveness answer of the
 * processes without an HTTP port (orchestrator, supervisor; the Helm chart probes it): answered from the
 * event loop without collecting any metric, and only once the app has booted (the listener opens after
 * `app.init()`). Anything else is 404.
 */
export async function startMetricsServer(
  metrics: MangoMetrics,
  options: { host: string; port: number },
): Promise<MetricsServer> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const readOnly = req.method === 'GET' || req.method === 'HEAD';
    if (path === '/healthz' && readOnly) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.method === 'HEAD' ? undefined : '{"status":"ok"}');
      return;
    }
    if (path !== '/metrics' || !readOnly) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`metrics collection failed: ${String(err)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts the app's metrics listener when `MANGO_METRICS_PORT` is set (see `MetricsEnv`); otherwise the
 * app exports nothing and returns undefined.
 */
export async function serveMetrics(
  metrics: MangoMetrics,
  env: { MANGO_METRICS_PORT?: number; MANGO_METRICS_HOST: string },
  log: { info(obj: object, msg: string): void },
): Promise<MetricsServer | undefined> {
  if (env.MANGO_METRICS_PORT === undefined) return undefined;
  const server = await startMetricsServer(metrics, {
    host: env.MANGO_METRICS_HOST,
    port: env.MANGO_METRICS_PORT,
  });
  log.info({ metrics_url: server.url }, 'metrics listening');
  return server;
}
