import { createServer, Server } from 'node:http';

/** A span as an OTLP/HTTP (JSON) exporter sent it, with its process's `service.name`. */
export interface CollectedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  /** Start and end (epoch ms, from the span's unix-nano times). */
  startMs: number;
  endMs: number;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpCollector {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT (traces are POSTed to `<url>/v1/traces`). */
  url: string;
  /** Every span received so far, in arrival order. */
  spans: CollectedSpan[];
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP (JSON) collector on 127.0.0.1 that keeps every span it receives in memory: the exporter
 * of each real process sends its spans here exactly as it would to an OpenTelemetry Collector.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += String(d)));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(raw) as { resourceSpans: any[] };
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value
            .stringValue;
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                service,
                name: s.name,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                kind: s.kind,
                attributes: Object.fromEntries(
                  (s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]),
                ),
                links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
                startMs: nanosToMs(s.startTimeUnixNano),
                endMs: nanosToMs(s.endTimeUnixNano),
                statusCode: s.status?.code ?? 0,
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** An OTLP JSON unix-nano time (a decimal string, or `{low, high}` long bits) in epoch ms. */
function nanosToMs(t: unknown): number {
  if (t && typeof t === 'object') {
    const { low, high } = t as { low: number; high: number };
    return Number(((BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)) / 1_000_000n);
  }
  return Number(BigInt(String(t ?? 0)) / 1_000_000n);
}
