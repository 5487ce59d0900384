import { type ModelClient, ModelRequestError, type ModelResponse } from '@mango/adapter-model';
import type { RequestParameters, ToolDeclaration } from '@mango/domain-sessions';
import type { SessionLog } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, SpanKind, SpanStatusCode, tracer } from '@mango/platform-tracing';
import { MODEL_REQUEST_ATTEMPTS, MODEL_REQUEST_EXHAUSTED } from '@mango/workflows';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { previewPublisher } from './preview-publisher';
import { failureMessage } from './session-prompt';
import { internal, type StoredEvent } from './step-events';
import type { ThreadContext } from './thread-context';

/** One attempt of a step's model request: where its events go and how they are keyed. */
export interface StepAttempt {
  sessionId: string;
  turn: number;
  thread: ThreadContext;
  /** The step's key (`[thread:<id>:]turn:<n>:step:<m>`). */
  key: string;
  /** Failed attempts of this request before this one. */
  failures: number;
  /** The step's `span.model_request_start` id. */
  startId: string;
  /** The trace of the message that started the turn. */
  traceparent: string | undefined;
}

/** The request a step sends (composed by step-request.ts). */
export interface StepRequest {
  model: string;
  /** The profile's parameters: max_tokens, thinking, effort, speed. */
  params: RequestParameters;
  system?: string;
  tools: ToolDeclaration[];
  betas: string[];
  messages: Parameters<ModelClient['createMessage']>[0]['messages'];
}

type Span = ReturnType<ReturnType<typeof tracer>['startSpan']>;

/** Where a reply's deltas are previewed. */
export type Previews = Pick<ReturnType<typeof previewPublisher>, 'onText' | 'onThinking' | 'close'>;

/** What {@link callModel} needs besides the request. */
export interface ModelCallDeps {
  log: SessionLog;
  model: ModelClient;
  metrics?: MangoMetrics;
}

/**
 * The model request of one step attempt, inside its OpenTelemetry span (gen_ai.* semantic conventions;
 * ids, model and token counts only — never prompt or completion content) and its duration metric. An
 * interrupt records the span's end and throws a cancellation; a failure is recorded ({@link recordFailure})
 * and thrown for Temporal to retry or give up on.
 */
export async function callModel(
  deps: ModelCallDeps,
  call: { attempt: StepAttempt; request: StepRequest; previews: Previews; thinkingId: string },
): Promise<ModelResponse> {
  const { attempt, request, previews } = call;
  const context = Context.current();
  const requested = process.hrtime.bigint();
  const span = requestSpan(attempt, request);
  const observe = (outcome: 'ok' | 'error' | 'cancelled') =>
    deps.metrics?.modelRequestDuration.observe(
      { model: request.model, outcome },
      Number(process.hrtime.bigint() - requested) / 1e9,
    );
  let response: ModelResponse;
  try {
    response = await deps.model.createMessage(
      {
        model: request.model,
        ...request.params,
        ...(request.system ? { system: request.system } : {}),
        ...(request.tools.length ? { tools: request.tools } : {}),
        messages: request.messages,
      },
      {
        signal: context.cancellationSignal,
        onText: (index, text) => previews.onText(index, text),
        onThinking: () => previews.onThinking(call.thinkingId),
        ...(request.betas.length ? { betas: request.betas } : {}),
      },
    );
    observe('ok');
    span.setAttributes({
      'gen_ai.response.id': response.id,
      'gen_ai.response.finish_reasons': [response.stop_reason],
      'gen_ai.usage.input_tokens': response.usage.input_tokens,
      'gen_ai.usage.output_tokens': response.usage.output_tokens,
    });
    span.end();
  } catch (err) {
    const outcome = context.cancellationSignal.aborted ? 'cancelled' : 'error';
    observe(outcome);
    endFailedSpan(span, outcome);
    if (outcome === 'cancelled') {
      // An interrupt: close the span; the turn goes idle once this activity has stopped.
      await recordCancel(deps.log, attempt);
      throw new CancelledFailure('the turn was interrupted');
    }
    const lastAttempt = context.info.attempt >= MODEL_REQUEST_ATTEMPTS;
    throw await recordFailure(deps.log, { attempt, err, lastAttempt, tools: request.tools });
  } finally {
    await previews.close();
  }
  return response;
}

/** The model request's span: it continues the trace of the message that started the turn. */
function requestSpan(attempt: StepAttempt, request: StepRequest): Span {
  const threadId = attempt.thread.sessionThreadId;
  return tracer().startSpan(
    `chat ${request.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'anthropic',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': request.model,
        'gen_ai.request.max_tokens': request.params.max_tokens,
        'mango.session.id': attempt.sessionId,
        ...(threadId ? { 'mango.session_thread.id': threadId } : {}),
        'mango.turn': attempt.turn,
        'mango.model_request.attempt': attempt.failures + 1,
      },
    },
    contextFrom(attempt.traceparent),
  );
}

function endFailedSpan(span: Span, outcome: 'error' | 'cancelled'): void {
  span.setAttribute('mango.outcome', outcome);
  if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The events of one attempt belong to its Thread. */
function ownedBy(thread: ThreadContext): (e: StoredEvent) => StoredEvent {
  return (e) => (thread.sessionThreadId ? { ...e, sessionThreadId: thread.sessionThreadId } : e);
}

/** An interrupted request: its end span, with no usage. */
async function recordCancel(log: SessionLog, attempt: StepAttempt): Promise<void> {
  const { key, failures, startId } = attempt;
  await log.withOpenSession(attempt.sessionId, (tx, s) =>
    log.append(
      tx,
      s,
      [
        ownedBy(attempt.thread)(
          internal(
            'span.model_request_end',
            { model_request_start_id: startId, is_error: null, model_usage: null },
            `${key}:cancelled:${failures}`,
          ),
        ),
      ],
      new Date(),
    ),
  );
}

/** The `session.error` type of a failed model request (openapi.yaml `SessionEvent`). */
function errorType(err: ModelRequestError): string {
  if (err.status === 529) return 'model_overloaded_error';
  if (err.status === 429) return 'model_rate_limited_error';
  return 'model_request_failed_error';
}

/**
 * Records one failed model request — its end span, a `session.error` and, when it will be retried,
 * `session.status_rescheduled` with the projection set to rescheduling — and returns what to throw:
 * the error itself (Temporal retries the activity with backoff) or a non-retryable failure once the
 * attempts are used up or the request cannot succeed.
 */
export async function recordFailure(
  log: SessionLog,
  failed: { attempt: StepAttempt; err: unknown; lastAttempt: boolean; tools: readonly ToolDeclaration[] },
): Promise<unknown> {
  const { attempt, err } = failed;
  if (!(err instanceof ModelRequestError)) return err; // not the model: retried without a session.error
  const retrying = err.retryable && !failed.lastAttempt;
  const { key, failures, thread } = attempt;
  const planned: StoredEvent[] = [
    internal(
      'span.model_request_end',
      { model_request_start_id: attempt.startId, is_error: true, model_usage: null },
      `${key}:failed:${failures}`,
    ),
    internal(
      'session.error',
      {
        error: {
          type: errorType(err),
          message: failureMessage(err, failed.tools),
          retry_status: { type: retrying ? 'retrying' : 'exhausted' },
        },
      },
      `${key}:error:${failures}`,
    ),
  ];
  if (retrying)
    planned.push(
      thread.primary
        ? internal('session.status_rescheduled', {}, `${key}:rescheduled:${failures}`)
        : internal(
            'session.thread_status_rescheduled',
            { session_thread_id: thread.id, agent_name: thread.agentName },
            `${key}:rescheduled:${failures}`,
          ),
    );
  await log.withOpenSession(attempt.sessionId, (tx, s) =>
    log.append(tx, s, planned.map(ownedBy(thread)), new Date()),
  );
  return retrying
    ? err
    : ApplicationFailure.create({ message: err.message, type: MODEL_REQUEST_EXHAUSTED, nonRetryable: true });
}
