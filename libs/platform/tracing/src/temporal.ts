import { createTraceState, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type {
  OpenTelemetrySinks,
  SerializableSpan,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { installedExport } from './tracing';

/**
 * Temporal's official OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry), wired the way the
 * Temporal samples do (samples-typescript/interceptors-opentelemetry): a client interceptor that puts the
 * active context into the headers of a start or signal, workflow interceptors inside the sandbox that
 * continue it (`RunWorkflow:<type>`, `HandleSignal:<name>`, `StartActivity:<type>`, `ContinueAsNew:<type>`)
 * and hand their finished spans to the worker through the `exporter` sink, and activity interceptors that
 * continue the schedule's context (`RunActivity:<type>`).
 */

/** Client interceptors for a Temporal Client that starts or signals workflows: none without tracing. */
export function temporalClientInterceptors(): { workflow?: WorkflowClientInterceptor[] } {
  return installedExport() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : {};
}

/** Activity interceptors for the Temporal Worker: none without tracing. */
export function temporalActivityInterceptors(): ActivityInterceptorsFactory[] {
  if (!installedExport()) return [];
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
  ];
}

/**
 * The `exporter` sink the workflow interceptors call (never during replay). With tracing, each span goes to
 * this process's span processor as an SDK 2 span (the interceptors' sandbox tracer is SDK 1: its
 * `parentSpanId` / `instrumentationLibrary` become `parentSpanContext` / `instrumentationScope`), with the
 * workflow id and run id as attributes and nothing else of the workflow's info (no memo, no search
 * attributes). Without tracing the spans are dropped.
 */
export function temporalWorkflowSinks(): InjectedSinks<OpenTelemetrySinks> {
  return {
    exporter: {
      export: {
        fn: (info, spans) => {
          const target = installedExport();
          if (!target) return;
          for (const span of spans)
            target.processor.onEnd(
              fromWorkflowSpan(span, target.resource, {
                temporalWorkflowId: info.workflowId,
                run_id: info.runId,
              }),
            );
        },
      },
    },
  };
}

/** A span serialised by the sandbox's SDK 1 tracer as the SDK 2 ReadableSpan the OTLP exporter reads. */
export function fromWorkflowSpan(
  span: SerializableSpan,
  resource: ReadableSpan['resource'],
  extra: Record<string, string>,
): ReadableSpan {
  const { traceState, ...rest } = span.spanContext;
  const spanContext: SpanContext = {
    ...rest,
    traceState: traceState ? createTraceState(traceState) : undefined,
  };
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => spanContext,
    parentSpanContext: span.parentSpanId
      ? { traceId: spanContext.traceId, spanId: span.parentSpanId, traceFlags: spanContext.traceFlags }
      : undefined,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: { ...span.attributes, ...extra },
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource,
    instrumentationScope: span.instrumentationLibrary ?? { name: '@temporalio/interceptor-workflow' },
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}
