import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  fromWorkflowSpan,
  temporalActivityInterceptors,
  temporalClientInterceptors,
  temporalWorkflowSinks,
} from './temporal';

describe('Temporal tracing wiring', () => {
  it('without tracing: no client or activity interceptors, and the workflow sink drops spans', () => {
    expect(temporalClientInterceptors()).toEqual({});
    expect(temporalActivityInterceptors()).toEqual([]);
    const sink = temporalWorkflowSinks().exporter.export;
    expect(sink.callDuringReplay).toBeUndefined();
    expect(() => sink.fn({ workflowId: 'w', runId: 'r' } as never, [])).not.toThrow();
  });

  it('turns a sandbox (SDK 1) span into an SDK 2 span with its parent, scope and only the ids added', () => {
    const resource = resourceFromAttributes({ 'service.name': 'mango-test' });
    const span = fromWorkflowSpan(
      {
        name: 'RunWorkflow:sessionWorkflow',
        kind: 0,
        spanContext: {
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          spanId: '00f067aa0ba902b7',
          traceFlags: 1,
          traceState: 'a=1',
        },
        parentSpanId: '10f067aa0ba902b8',
        startTime: [1, 0],
        endTime: [2, 0],
        status: { code: 1 },
        attributes: { x: 'y' },
        links: [],
        events: [],
        duration: [1, 0],
        ended: true,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
        instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
      },
      resource,
      { temporalWorkflowId: 'sesn_1', run_id: 'run' },
    );
    expect(span.spanContext().traceState?.get('a')).toBe('1');
    expect(span.parentSpanContext).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '10f067aa0ba902b8',
      traceFlags: 1,
    });
    expect(span.instrumentationScope).toEqual({ name: '@temporalio/interceptor-workflow' });
    expect(span.attributes).toEqual({ x: 'y', temporalWorkflowId: 'sesn_1', run_id: 'run' });
    expect(span.resource).toBe(resource);
  });

  it('a root sandbox span has no parent', () => {
    const span = fromWorkflowSpan(
      {
        name: 'n',
        kind: 0,
        spanContext: {
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          spanId: '00f067aa0ba902b7',
          traceFlags: 1,
        },
        startTime: [1, 0],
        endTime: [2, 0],
        status: { code: 0 },
        attributes: {},
        links: [],
        events: [],
        duration: [1, 0],
        ended: true,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
        instrumentationLibrary: { name: 'x' },
      },
      resourceFromAttributes({}),
      {},
    );
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceState).toBeUndefined();
  });
});
