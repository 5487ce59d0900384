import 'reflect-metadata';
import {
  context,
  Context,
  propagation,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
  Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsUrl, Max, Min } from 'class-validator';
import { MetricsEnv } from '@mango/platform-metrics';

/**
 * Every app's observability variables: the metrics listener (MetricsEnv) and OpenTelemetry's standard
 * OTLP variables. Tracing is on only when an OTLP endpoint is set; otherwise the OpenTelemetry API stays
 * a no-op and nothing is exported.
 */
export class ObservabilityEnv extends MetricsEnv {
  /** Base URL of an OTLP/HTTP collector; traces go to `<it>/v1/traces`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Full OTLP/HTTP traces URL (wins over the base endpoint). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  /** How long spans are batched before export (ms). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  OTEL_BSP_SCHEDULE_DELAY?: number;
}

export interface Tracing {
  enabled: boolean;
  /** Flushes and stops the exporter (call on shutdown). */
  shutdown(): Promise<void>;
}

let installed: NodeTracerProvider | undefined;
let exportTo: { processor: SpanProcessor; resource: Resource } | undefined;

/**
 * Installs the process's tracer provider (W3C trace context propagation, AsyncLocalStorage context,
 * batched OTLP/HTTP export) when an OTLP endpoint is configured; a no-op otherwise. One provider per
 * process: a second call (several apps booted in one test process) reuses the first.
 */
export function initTracing(service: string, env: ObservabilityEnv): Tracing {
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`
      : undefined);
  if (!endpoint) return { enabled: false, shutdown: async () => undefined };
  if (!installed) {
    const resource = resourceFromAttributes({
      'service.name': `mango-${service}`,
      'service.namespace': 'mango',
    });
    const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }), {
      scheduledDelayMillis: env.OTEL_BSP_SCHEDULE_DELAY ?? 1000,
    });
    installed = new NodeTracerProvider({ resource, spanProcessors: [processor] });
    installed.register();
    exportTo = { processor, resource };
  }
  const provider = installed;
  return {
    enabled: true,
    shutdown: async () => {
      await provider.forceFlush();
    },
  };
}

export const tracer = (): Tracer => trace.getTracer('mango');

/** Whether this process exports traces (callers skip work that only feeds spans when it does not). */
export const tracingEnabled = (): boolean => installed !== undefined;

/**
 * The installed span processor and resource, for spans finished elsewhere (the Temporal workflow sandbox
 * hands its spans over through a sink); undefined while tracing is off.
 */
export const installedExport = (): { processor: SpanProcessor; resource: Resource } | undefined => exportTo;

/**
 * Runs `fn` in a span (child of the active context), records an exception and error status when it
 * throws, and always ends the span. Attributes never carry content or secrets (callers pass ids,
 * names, counts).
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean | undefined> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: clean(options.attributes) },
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err instanceof Error ? { name: err.name, message: err.message } : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Records a span that already finished elsewhere (another process reported its timing): started and
 * ended at the given times, under `parent`. An error outcome sets the error status (no message: callers
 * pass no content). Attributes carry ids, names and outcomes only.
 */
export function recordSpan(
  name: string,
  o: {
    parent: Context;
    startTime: number;
    endTime: number;
    kind?: SpanKind;
    attributes: Record<string, string | number | boolean | undefined>;
    error?: boolean;
  },
): void {
  const span = tracer().startSpan(
    name,
    { kind: o.kind ?? SpanKind.INTERNAL, startTime: o.startTime, attributes: clean(o.attributes) },
    o.parent,
  );
  if (o.error) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(o.endTime);
}

/** The active context's W3C `traceparent` (to store beside work another process picks up), if any. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a stored `traceparent` names (the active one when there is none). */
export function contextFrom(traceparent: string | null | undefined) {
  return traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
}

/** Runs `fn` with the context a stored or inbound `traceparent` names as its parent. */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  if (!traceparent) return fn();
  return context.with(propagation.extract(context.active(), { traceparent }), fn);
}

function clean(attrs: Record<string, string | number | boolean | undefined> = {}) {
  return Object.fromEntries(Object.entries(attrs).filter(([, v]) => v !== undefined)) as Record<
    string,
    string | number | boolean
  >;
}

export { SpanKind, SpanStatusCode, trace, context, propagation };
export type { Context };
