import { ModelClient, ModelRequestError, ModelResponse } from '@mango/adapter-model';
import { AgentDefinition, autoPermission, CustomTool, evaluatePermission } from '@mango/domain-agents';
import type { DeclaredMcpTool } from '@mango/domain-mcp';
import {
  addUsage,
  Budget,
  budgetReached,
  composeModelRequest,
  isActivation,
  openCalls,
  PriceTable,
  SessionUsage,
  stepOutcome,
  transcript,
} from '@mango/domain-sessions';
import { SessionEventEntity, type SessionLog } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, SpanKind, SpanStatusCode, tracer } from '@mango/platform-tracing';
import {
  MODEL_REQUEST_ATTEMPTS,
  MODEL_REQUEST_EXHAUSTED,
  type ModelStepRef,
  type StepOutcome,
} from '@mango/workflows';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { AutoJudgeSettings, autoEvaluations } from './auto-permission';
import { compactIfNeeded } from './compaction';
import type { McpRuntime } from './mcp.activities';
import { previewPublisher } from './preview-publisher';
import { answerActivation, failureMessage, loadPromptInputs, serverToolEvents } from './session-prompt';
import { countUsage, internal, MAX_TOKENS, StoredEvent, turnTraceparent } from './step-events';

/** What a model step needs: the model endpoint, MCP, the compaction threshold, prices and metrics. */
export interface ModelStepDeps {
  /** The model endpoint, or why there is none usable (every turn then ends at once with that reason). */
  model: ModelClient | { unavailable: string } | null;
  /** Remote MCP (tool listing and journaled calls); absent: MCP servers are not offered to the model. */
  mcp?: McpRuntime;
  /** Prompt size (tokens) at which completed turns are summarized before the next turn (default 160,000). */
  compactAtTokens?: number;
  /** Operator list prices (`MANGO_MODEL_PRICES`) over the built-in ones. */
  prices?: PriceTable;
  /** Turn, model request, token and list-cost metrics (the orchestrator's registry). */
  metrics?: MangoMetrics;
  /** Bounds of the `auto` policy's judgement request. */
  autoJudge?: AutoJudgeSettings;
}

/**
 * One model step: the transcript from one read of the log, the model request (no transaction open
 * across it), its events appended once under deterministic idempotency keys.
 */
export function createModelStep(
  deps: ModelStepDeps,
  log: SessionLog,
): (ref: ModelStepRef) => Promise<StepOutcome> {
  const compactAt = deps.compactAtTokens ?? 160_000;
  return async function modelStep({ sessionId, turn, step }: ModelStepRef): Promise<StepOutcome> {
    if (!deps.model) throw ApplicationFailure.nonRetryable('no model endpoint is configured');
    if ('unavailable' in deps.model) throw ApplicationFailure.nonRetryable(deps.model.unavailable);
    const model = deps.model;
    const key = `turn:${turn}:step:${step}`;
    // The step reads the Session's log once (ADR 0004): compaction and the request share that read, a
    // later look reads only what was appended since.
    const reader = log.reader(sessionId);
    if (step === 0)
      await compactIfNeeded(log, reader, model, sessionId, turn, compactAt, deps.prices ?? {}, deps.metrics);
    const prepared = await log.withOpenSession(sessionId, async (tx, s) => {
      const events = await reader.read(tx);
      // Calls still open come first: the model is asked again only when every call is answered.
      const pending = openCalls(events);
      if (pending) return { pending };
      const done = events.some((e) => e.idempotencyKey === `${key}:model_end`);
      if (done) return { done: events };
      // The pre-request gate: a requires_action above outranks it; nothing is sent once the cap is reached.
      if (budgetReached(s.budget as Budget | null, (s.usage as SessionUsage).list_cost))
        return { pending: { stopReason: 'budget_reached' as const } };
      // Failed attempts of this request so far (each recorded once): the next start span is numbered by them.
      const failures = events.filter((e) => e.idempotencyKey?.startsWith(`${key}:failed:`)).length;
      const planned: StoredEvent[] = [];
      if (s.status === 'rescheduling') {
        planned.push(internal('session.status_running', {}, `${key}:resumed:${failures}`));
      }
      const startKey = failures ? `${key}:model_start:${failures}` : `${key}:model_start`;
      planned.push(internal('span.model_request_start', {}, startKey));
      await log.append(tx, s, planned, new Date());
      const startId =
        (await tx.findOne(SessionEventEntity, { where: { sessionId, idempotencyKey: startKey } }))?.id ?? '';
      return {
        agent: s.agent as unknown as AgentDefinition,
        vaultIds: s.vaultIds ?? [],
        messages: transcript(events),
        failures,
        startId,
        traceparent: turnTraceparent(events),
        prompt: await loadPromptInputs(tx, sessionId, s.agent as unknown as AgentDefinition),
      };
    });
    if (!prepared) return { stopReason: 'end_turn' };
    if ('pending' in prepared) return prepared.pending!;
    if ('done' in prepared)
      return outcomeOf(prepared.done!.filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`)));
    const { agent, startId, failures } = prepared;
    const context = Context.current();
    const custom = agent.tools.filter((t): t is CustomTool => t.type === 'custom');
    // MCP tools of this turn (listed once per turn); a server that cannot be listed is left out of the
    // turn and reported once per turn as a session.error naming it.
    let mcpTools: DeclaredMcpTool[] = [];
    if (deps.mcp && (agent.mcp_servers ?? []).length) {
      const declared = await deps.mcp.declare(
        sessionId,
        turn,
        agent,
        prepared.vaultIds!,
        context.cancellationSignal,
      );
      mcpTools = declared.tools;
      if (declared.failures.length)
        await log.withOpenSession(sessionId, (tx, s) =>
          log.append(
            tx,
            s,
            declared.failures.map((f) =>
              internal(
                'session.error',
                {
                  error: {
                    type: f.type,
                    message: f.message.slice(0, 1000),
                    mcp_server_name: f.server,
                    retry_status: { type: 'retrying' },
                  },
                },
                `turn:${turn}:mcp_error:${f.server}`,
              ),
            ),
            new Date(),
          ),
        );
    }
    // What the model sees (docs/api-guide.md "What the model sees"): libs/domain/sessions model-request.ts.
    const prompt = prepared.prompt!;
    const { system, tools, betas } = composeModelRequest({
      agent,
      skills: prompt.skills,
      memoryStores: prompt.memoryStores,
      mcpTools: mcpTools.map((t) => ({
        name: t.modelName,
        description: t.description,
        input_schema: t.input_schema,
      })),
    });
    // The reply's agent.message id is chosen now, so that its previews name the event they precede.
    const messageId = newId('sessionEvent');
    const previews = previewPublisher(log, sessionId, messageId);
    let response: ModelResponse;
    const requested = process.hrtime.bigint();
    // The model request's span continues the trace of the message that started the turn (gen_ai.*
    // semantic conventions; ids, model and token counts only — never prompt or completion content).
    const span = tracer().startSpan(
      `chat ${agent.model.id}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'anthropic',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': agent.model.id,
          'gen_ai.request.max_tokens': MAX_TOKENS,
          'mango.session.id': sessionId,
          'mango.turn': turn,
          'mango.model_request.attempt': failures + 1,
        },
      },
      contextFrom(prepared.traceparent),
    );
    const observeRequest = (outcome: 'ok' | 'error' | 'cancelled') => {
      deps.metrics?.modelRequestDuration.observe(
        { model: agent.model.id, outcome },
        Number(process.hrtime.bigint() - requested) / 1e9,
      );
      if (outcome !== 'ok') {
        span.setAttribute('mango.outcome', outcome);
        if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    };
    try {
      response = await model.createMessage(
        {
          model: agent.model.id,
          max_tokens: MAX_TOKENS,
          ...(system ? { system } : {}),
          ...(tools.length ? { tools } : {}),
          messages: prepared.messages!,
        },
        {
          signal: context.cancellationSignal,
          onText: (index, text) => previews.onText(index, text),
          ...(betas.length ? { betas } : {}),
        },
      );
      observeRequest('ok');
      span.setAttributes({
        'gen_ai.response.id': response.id,
        'gen_ai.response.finish_reasons': [response.stop_reason],
        'gen_ai.usage.input_tokens': response.usage.input_tokens,
        'gen_ai.usage.output_tokens': response.usage.output_tokens,
      });
      span.end();
    } catch (err) {
      observeRequest(context.cancellationSignal.aborted ? 'cancelled' : 'error');
      if (context.cancellationSignal.aborted) {
        // An interrupt: close the span; the turn goes idle once this activity has stopped.
        await log.withOpenSession(sessionId, (tx, s) =>
          log.append(
            tx,
            s,
            [
              internal(
                'span.model_request_end',
                { model_request_start_id: startId, is_error: null, model_usage: null },
                `${key}:cancelled:${failures}`,
              ),
            ],
            new Date(),
          ),
        );
        throw new CancelledFailure('the turn was interrupted');
      }
      throw await recordFailure(
        log,
        sessionId,
        key,
        failures,
        startId,
        err,
        context.info.attempt >= MODEL_REQUEST_ATTEMPTS,
        tools,
      );
    } finally {
      await previews.close();
    }
    const text = response.content
      .filter((b) => b.type === 'text')
      .map((b) => ({ type: 'text', text: (b as { text: string }).text }));
    const uses = response.content.filter(
      (b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use',
    );
    const isCustom = (name: string) => custom.some((t) => t.name === name);
    // `auto` calls are judged before their events exist (docs/api-guide.md "The auto permission policy").
    const judged = await autoEvaluations(
      model,
      agent,
      uses,
      isCustom,
      mcpTools,
      deps.autoJudge ?? {},
      context.cancellationSignal,
    );
    const activationIds = uses.map(() => newId('sessionEvent'));
    let recorded: { before: SessionUsage; after: SessionUsage } | undefined;
    const appended = await log.withOpenSession(sessionId, async (tx, s) => {
      // Skill activations are answered here, from Mango's kept copy (session-prompt.ts).
      const activations = new Map<number, Awaited<ReturnType<typeof answerActivation>>>();
      for (const [i, u] of uses.entries())
        if (isActivation(u.name, agent, prompt.skills.length > 0))
          activations.set(i, await answerActivation(tx, prompt.skills, u.input));
      const planned: StoredEvent[] = [
        // Web tools the endpoint ran, before the reply's text (their blocks precede it in the transcript).
        ...serverToolEvents(response.content, key),
        ...(text.length
          ? [{ ...internal('agent.message', { content: text }, `${key}:message`), id: messageId }]
          : []),
        ...uses.map((u, i) => {
          if (isCustom(u.name))
            return {
              ...internal('agent.custom_tool_use', { name: u.name, input: u.input }, `${key}:tool_use:${i}`),
              // An operator's worker may serve it (docs/operator-guide.md "Operator custom tools").
              runnable: true,
            };
          const answer = activations.get(i);
          if (answer)
            return {
              ...internal(
                'agent.tool_use',
                { name: u.name, input: u.input, evaluated_permission: 'allow', _answered: true },
                `${key}:tool_use:${i}`,
              ),
              id: activationIds[i],
            };
          const mcpTool = mcpTools.find((t) => t.modelName === u.name);
          if (mcpTool)
            return internal(
              'agent.mcp_tool_use',
              {
                name: mcpTool.toolName,
                mcp_server_name: mcpTool.serverName,
                input: u.input,
                evaluated_permission: judged.has(i) ? autoPermission(judged.get(i)!) : mcpTool.permission,
                ...(judged.has(i) ? { evaluation: judged.get(i) } : {}),
                _model_name: mcpTool.modelName,
              },
              `${key}:tool_use:${i}`,
            );
          const evaluation = judged.get(i);
          const permission = evaluation
            ? autoPermission(evaluation)
            : evaluatePermission(s.agent as unknown as AgentDefinition, u.name);
          return {
            ...internal(
              'agent.tool_use',
              {
                name: u.name,
                input: u.input,
                evaluated_permission: permission,
                ...(evaluation ? { evaluation } : {}),
              },
              `${key}:tool_use:${i}`,
            ),
            // An allowed call needs the worker: make sure the Session has a live Work item.
            runnable: permission === 'allow',
          };
        }),
        ...[...activations].map(([i, answer]) =>
          internal(
            'agent.tool_result',
            {
              tool_use_id: activationIds[i],
              content: [{ type: 'text', text: answer.text }],
              is_error: answer.isError,
            },
            `${key}:tool_result:${i}`,
          ),
        ),
        internal(
          'span.model_request_end',
          {
            model_request_start_id: startId,
            is_error: false,
            model_usage: {
              input_tokens: response.usage.input_tokens,
              output_tokens: response.usage.output_tokens,
              cache_creation_input_tokens: response.usage.cache_creation_input_tokens ?? 0,
              cache_read_input_tokens: response.usage.cache_read_input_tokens ?? 0,
            },
          },
          `${key}:model_end`,
        ),
      ];
      const inserted = await log.append(tx, s, planned, new Date());
      if (inserted.length) {
        const before = s.usage as SessionUsage;
        const usage = addUsage(agent.model.id, before, response.usage, deps.prices ?? {});
        await log.saveUsage(tx, s, usage);
        recorded = { before, after: usage };
      }
      // The step's own tool calls, looked up by key (the whole log is not read again).
      return log.eventsByKeyPrefix(tx, sessionId, `${key}:tool_use:`);
    });
    // Counted once the usage is committed (a retried activity that recorded nothing counts nothing).
    if (recorded && deps.metrics) countUsage(deps.metrics, agent.model.id, response.usage, recorded);
    const outcome = outcomeOf(appended ?? []);
    // A long-running web tool paused the reply (`pause_turn`): the next request continues it.
    if (response.stop_reason === 'pause_turn' && outcome.stopReason === 'end_turn')
      return { stopReason: 'tool_use', toolUseIds: [] };
    return outcome;
  };
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
async function recordFailure(
  log: SessionLog,
  sessionId: string,
  key: string,
  failures: number,
  startId: string,
  err: unknown,
  lastAttempt: boolean,
  tools: Parameters<typeof failureMessage>[1],
): Promise<unknown> {
  if (!(err instanceof ModelRequestError)) return err; // not the model: retried without a session.error
  const retrying = err.retryable && !lastAttempt;
  await log.withOpenSession(sessionId, async (tx, s) => {
    const planned: StoredEvent[] = [
      internal(
        'span.model_request_end',
        { model_request_start_id: startId, is_error: true, model_usage: null },
        `${key}:failed:${failures}`,
      ),
      internal(
        'session.error',
        {
          error: {
            type: errorType(err),
            message: failureMessage(err, tools),
            retry_status: { type: retrying ? 'retrying' : 'exhausted' },
          },
        },
        `${key}:error:${failures}`,
      ),
    ];
    if (retrying) {
      planned.push(internal('session.status_rescheduled', {}, `${key}:rescheduled:${failures}`));
    }
    await log.append(tx, s, planned, new Date());
  });
  return retrying
    ? err
    : ApplicationFailure.create({ message: err.message, type: MODEL_REQUEST_EXHAUSTED, nonRetryable: true });
}

/** What a model step asks for: the pure decision (libs/domain/sessions `stepOutcome`) over its tool calls. */
function outcomeOf(uses: SessionEventEntity[]): StepOutcome {
  return stepOutcome(uses);
}
