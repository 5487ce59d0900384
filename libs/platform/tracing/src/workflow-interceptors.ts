/**
 * The workflow interceptors compiled into every workflow bundle (apps/orchestrator/src/workflow-bundle.ts):
 * Temporal's OpenTelemetry workflow interceptors (@temporalio/interceptors-opentelemetry), used only where
 * there is a trace to continue. An inbound call (the run, a signal, an update, a query) is traced when its
 * headers carry a trace context (the client interceptor puts one there only while tracing is on, see
 * `temporalClientInterceptors`); an outbound call (an activity, a continue-as-new, …) when a span is active
 * in the workflow, i.e. inside one of those. Without tracing a workflow task makes no span, no sink call
 * and none of the interceptors' extra promises (every workflow promise costs the SDK a captured stack).
 *
 * Runs inside the workflow sandbox: imports only what the sandbox may load. Neither choice issues or
 * reorders a command (the interceptors only add headers and spans; handlers and commands run at the same
 * point either way), so histories recorded with or without tracing replay against it.
 */
import { trace } from '@opentelemetry/api';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

type Headers = Record<string, unknown>;
type Inbound = Required<
  Pick<
    WorkflowInboundCallsInterceptor,
    'execute' | 'handleSignal' | 'handleUpdate' | 'validateUpdate' | 'handleQuery'
  >
>;
type Outbound = Required<
  Pick<
    WorkflowOutboundCallsInterceptor,
    | 'scheduleActivity'
    | 'scheduleLocalActivity'
    | 'startChildWorkflowExecution'
    | 'continueAsNew'
    | 'signalWorkflow'
    | 'startNexusOperation'
    | 'getLogAttributes'
  >
>;

/** An inbound call's headers carry a trace context to continue. */
export const carriesTrace = (headers: Headers | undefined): boolean => headers?.[TRACE_HEADER] !== undefined;

/** A span is active in the workflow (an inbound call is being traced). */
const inTrace = (): boolean => trace.getActiveSpan() !== undefined;

/** Inbound calls: traced (Temporal's interceptor) when their headers carry a trace context, else passed on. */
export class TracedInboundInterceptor implements Inbound {
  private otel?: OpenTelemetryInboundInterceptor;
  private get traced(): OpenTelemetryInboundInterceptor {
    return (this.otel ??= new OpenTelemetryInboundInterceptor());
  }

  execute: Inbound['execute'] = (input, next) =>
    carriesTrace(input.headers) ? this.traced.execute(input, next) : next(input);
  handleSignal: Inbound['handleSignal'] = (input, next) =>
    carriesTrace(input.headers) ? this.traced.handleSignal(input, next) : next(input);
  handleUpdate: Inbound['handleUpdate'] = (input, next) =>
    carriesTrace(input.headers) ? this.traced.handleUpdate(input, next) : next(input);
  validateUpdate: Inbound['validateUpdate'] = (input, next) =>
    carriesTrace(input.headers) ? this.traced.validateUpdate(input, next) : next(input);
  handleQuery: Inbound['handleQuery'] = (input, next) =>
    carriesTrace(input.headers) ? this.traced.handleQuery(input, next) : next(input);
}

/** Outbound calls: traced (their context in the headers) inside a traced inbound call, else passed on. */
export class TracedOutboundInterceptor implements Outbound {
  private otel?: OpenTelemetryOutboundInterceptor;
  private get traced(): OpenTelemetryOutboundInterceptor {
    return (this.otel ??= new OpenTelemetryOutboundInterceptor());
  }

  scheduleActivity: Outbound['scheduleActivity'] = (input, next) =>
    inTrace() ? this.traced.scheduleActivity(input, next) : next(input);
  scheduleLocalActivity: Outbound['scheduleLocalActivity'] = (input, next) =>
    inTrace() ? this.traced.scheduleLocalActivity(input, next) : next(input);
  startChildWorkflowExecution: Outbound['startChildWorkflowExecution'] = (input, next) =>
    inTrace() ? this.traced.startChildWorkflowExecution(input, next) : next(input);
  continueAsNew: Outbound['continueAsNew'] = (input, next) =>
    inTrace() ? this.traced.continueAsNew(input, next) : next(input);
  signalWorkflow: Outbound['signalWorkflow'] = (input, next) =>
    inTrace() ? this.traced.signalWorkflow(input, next) : next(input);
  startNexusOperation: Outbound['startNexusOperation'] = (input, next) =>
    inTrace() ? this.traced.startNexusOperation(input, next) : next(input);
  // Log attributes name the active span's trace, if any.
  getLogAttributes: Outbound['getLogAttributes'] = (input, next) =>
    inTrace() ? this.traced.getLogAttributes(input, next) : next(input);
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new TracedInboundInterceptor()],
  outbound: [new TracedOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
