import { trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

// Temporal's interceptors call into the workflow sandbox; here each only records that it was chosen.
const traced: string[] = [];
jest.mock('@temporalio/interceptors-opentelemetry/lib/workflow', () => {
  const recording = (methods: string[]) =>
    class {
      constructor() {
        for (const m of methods)
          (this as Record<string, unknown>)[m] = (input: unknown, next: (i: unknown) => unknown) => {
            traced.push(m);
            return next(input);
          };
      }
    };
  return {
    OpenTelemetryInboundInterceptor: recording(['execute', 'handleSignal', 'handleQuery']),
    OpenTelemetryOutboundInterceptor: recording(['scheduleActivity', 'continueAsNew']),
    OpenTelemetryInternalsInterceptor: recording([]),
  };
});

import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { interceptors } from './workflow-interceptors';

describe('workflow interceptors: Temporal OpenTelemetry only where there is a trace', () => {
  const next = jest.fn((input: unknown) => Promise.resolve(input));
  beforeEach(() => {
    traced.length = 0;
    next.mockClear();
  });

  it('an inbound call without a trace header is passed on untraced; one with it is traced', async () => {
    const inbound = interceptors().inbound![0]!;
    await inbound.execute!({ headers: {}, args: [] }, next as never);
    await inbound.handleSignal!({ headers: {}, args: [], signalName: 'input' }, next as never);
    expect(traced).toEqual([]);
    expect(next).toHaveBeenCalledTimes(2);
    const headers = { [TRACE_HEADER]: { data: new Uint8Array() } };
    await inbound.execute!({ headers, args: [] }, next as never);
    await inbound.handleSignal!({ headers, args: [], signalName: 'input' }, next as never);
    expect(traced).toEqual(['execute', 'handleSignal']);
    expect(next).toHaveBeenCalledTimes(4);
  });

  it('an outbound call is traced only while a span is active', async () => {
    const outbound = interceptors().outbound![0]!;
    const input = { headers: {}, activityType: 'runModelStep' } as never;
    await outbound.scheduleActivity!(input, next as never);
    expect(traced).toEqual([]);
    // Inside a traced inbound call the workflow's context manager has its span active.
    const span = new BasicTracerProvider().getTracer('test').startSpan('RunWorkflow:sessionWorkflow');
    const active = jest.spyOn(trace, 'getActiveSpan').mockReturnValue(span);
    try {
      await outbound.scheduleActivity!(input, next as never);
    } finally {
      active.mockRestore();
      span.end();
    }
    expect(traced).toEqual(['scheduleActivity']);
    expect(next).toHaveBeenCalledTimes(2);
  });
});
