import { ModelClient, ModelRequestError, ModelResponse } from '@mango/adapter-model';
import { autoPermission, CustomTool, evaluatePermission } from '@mango/domain-agents';
import type { DeclaredMcpTool } from '@mango/domain-mcp';
import {
  addUsage,
  Budget,
  budgetReached,
  composeModelRequest,
  isActivation,
  CHARS_PER_TOKEN,
  estimateFromUsage,
  MAX_TOKENS_CONTINUATIONS,
  type ModelProfileOverrides,
  openCalls,
  profileOf,
  requestParameters,
  withContinuation,
  PriceTable,
  SessionUsage,
  stepOutcome,
  transcript,
  type CoordinatorSnapshot,
  isPlatformCall,
  platformTools,
  threadKeyPrefix,
  threadLog,
} from '@mango/domain-sessions';
import {
  type SessionEntity,
  SessionEventEntity,
  type SessionLog,
  SessionLogCache,
  SessionRepository,
  type SessionWakes,
  type WakeWatch,
  untilReady,
} from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, SpanKind, SpanStatusCode, tracer } from '@mango/platform-tracing';
import {
  MODEL_REQUEST_ATTEMPTS,
  MODEL_REQUEST_EXHAUSTED,
  type ModelStepRef,
  type StepOutcome,
  type StepsOutcome,
} from '@mango/workflows';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { AutoJudgeSettings, autoEvaluations } from './auto-permission';
import { compactIfNeeded } from './compaction';
import type { McpRuntime } from './mcp.activities';
import { previewPublisher } from './preview-publisher';
import { answerActivation, failureMessage, serverToolEvents } from './session-prompt';
import { countUsage, internal, StoredEvent, turnTraceparent } from './step-events';
import { mayContinue, resultsState } from './step-continuation';
import { claiming, StepFlights, untilLanded } from './step-flights';
import { carryOutPlatformCall } from './thread-calls';
import { type ThreadContext, threadContext } from './thread-context';
import { type PromptInputs, skillEntries, skillVersionRows } from '@mango/persistence';
import type { EntityManager } from 'typeorm';

/** What a model step needs: the model endpoint, MCP, the compaction threshold, prices and metrics. */
export interface ModelStepDeps {
  /** The model endpoint, or why there is none usable (every turn then ends at once with that reason). */
  model: ModelClient | { unavailable: string } | null;
  /** Remote MCP (tool listing and journaled calls); absent: MCP servers are not offered to the model. */
  mcp?: McpRuntime;
  /**
   * Prompt size (tokens) at which completed turns are summarized before the next turn
   * (`MANGO_COMPACT_AT_TOKENS`); unset: 80% of the model profile's context window.
   */
  compactAtTokens?: number;
  /** Operator model profiles (`MANGO_MODEL_PROFILES`) over the built-in ones. */
  profiles?: ModelProfileOverrides;
  /** Operator list prices (`MANGO_MODEL_PRICES`) over the built-in ones. */
  prices?: PriceTable;
  /** Turn, model request, token and list-cost metrics (the orchestrator's registry). */
  metrics?: MangoMetrics;
  /** Bounds of the `auto` policy's judgement request. */
  autoJudge?: AutoJudgeSettings;
  /**
   * The in-activity wait for a step's tool results (ADR 0019, `MANGO_TOOL_RESULT_WAIT_MS`): `ms` 0 or
   * absent turns it off; `wakes` are the outbox relay's notices by Session; `recheckMs` the safety re-check.
   */
  toolResultWait?: { ms: number; wakes: SessionWakes; recheckMs?: number };
}

/** The wait's look at the log when no notice came (a lost notice costs at most this). */
const RECHECK_MS = 500;

/**
 * One model step: the transcript from one read of the log, the model request (no transaction open
 * across it), its events appended once under deterministic idempotency keys.
 */
export function createModelStep(
  deps: ModelStepDeps,
  log: SessionLog,
  sessions: SessionRepository = new SessionRepository(),
  /** The logs earlier steps of this process read: a step reads only what was appended since. */
  logs: SessionLogCache = new SessionLogCache(),
): (ref: ModelStepRef) => Promise<StepsOutcome> {
  const compaction = { compactAtTokens: deps.compactAtTokens, profiles: deps.profiles };
  const wait = deps.toolResultWait;
  const flights = new StepFlights();
  // A log is kept across the steps of a turn only: a turn that stops (or a step that fails) lets it go,
  // so an idle Session holds no memory here.
  /** A step's start made by the wait that found its inputs ready (see {@link prepareIn}). */
  type Ready = { prepared: Awaited<ReturnType<typeof prepareIn>> };
  const modelStep = async (ref: ModelStepRef, ready?: Ready): Promise<StepOutcome> => {
    try {
      const outcome = await runStep(ref, ready);
      if (outcome.stopReason !== 'tool_use') logs.forget(ref.sessionId);
      return outcome;
    } catch (err) {
      logs.forget(ref.sessionId);
      // A claim the wait made for this step is given back however the step failed (releasing is idempotent).
      releaseOf(ready)?.();
      throw err;
    }
  };
  const releaseOf = (ready?: Ready) =>
    ready?.prepared && 'release' in ready.prepared ? ready.prepared.release : undefined;
  /**
   * Steps `ref.step`, `ref.step + 1`, … (ADR 0019): after a step that ended in sandbox tool calls the
   * activity waits up to `wait.ms` for their results (woken by the relay's notices, read under the row
   * lock) and, when all are in and nothing closed the turn's calls, runs the next step itself. Each step is
   * the same idempotent step as alone: a retried activity takes the steps already in the log from the log
   * (their model_end), and the model is asked again only for a step that recorded no reply.
   */
  return async function modelSteps(ref: ModelStepRef): Promise<StepsOutcome> {
    const maxSteps = Math.max(1, ref.maxSteps ?? 1);
    const context = Context.current();
    const began = Date.now();
    let ready: Ready | undefined;
    for (let ran = 1, step = ref.step; ; ran++, step++) {
      // Watched from before the step commits its tool calls: a result (which can only follow its call)
      // always wakes the watch, so the wait needs no look until something did.
      const watch = wait && ran < maxSteps ? wait.wakes.watch(ref.sessionId) : undefined;
      let outcome: StepOutcome;
      try {
        outcome = await modelStep({ ...ref, step }, ready);
      } catch (err) {
        watch?.close();
        throw err;
      }
      const counted: StepsOutcome = ref.maxSteps === undefined ? outcome : { ...outcome, steps: ran };
      if (
        !wait ||
        !mayContinue(outcome, {
          ran,
          maxSteps,
          waitMs: wait.ms,
          elapsedMs: Date.now() - began,
          timeoutMs: context.info.startToCloseTimeoutMs,
        })
      ) {
        watch?.close();
        return counted;
      }
      const waited = await awaitResults(ref, step, outcome.toolUseIds, watch);
      // (A look that prepared the next step, and so claimed it, always ends the wait 'ready'.)
      if (waited.end === 'aborted') throw new CancelledFailure('the turn was interrupted');
      // Past the window (or stopped): the workflow waits as before; the calls the last look saw answered
      // are said (any later result reaches it as a signal).
      // (Only a workflow that passed maxSteps > 1 gets here: the count is always said.)
      if (waited.end !== 'ready') return { ...outcome, answered: waited.answered, steps: ran };
      ready = waited.next;
    }
  };

  /**
   * The in-activity wait for one step's calls: 'ready' when every call has its result. The look that finds
   * them all answered also starts the next step in its transaction (`next`, {@link prepareIn}): the row
   * is locked and the log read already, so the step needs no transaction of its own for that.
   */
  async function awaitResults(
    ref: ModelStepRef,
    step: number,
    toolUseIds: string[],
    watch?: WakeWatch,
  ): Promise<{ end: 'ready' | 'timeout' | 'stopped' | 'aborted'; answered: string[]; next?: Ready }> {
    const { sessionId, threadId, turn } = ref;
    const prefix = threadKeyPrefix(threadId);
    const since = [`${prefix}turn:${turn}:running`, `${prefix}turn:${turn}:step:${step}:model_start`];
    const reader = log.reader(sessionId, logs);
    let answered: string[] = [];
    let stopped = false;
    let next: Ready | undefined;
    const end = await untilReady(
      wait!.wakes,
      sessionId,
      async () => {
        const state = await claiming((claims) =>
          log.withOpenSession(sessionId, async (tx, s) => {
            const whole = await reader.read(tx);
            const found = resultsState(threadLog(whole, threadId), toolUseIds, since);
            if (!found.stopped && found.answered.length === toolUseIds.length)
              next = {
                prepared: await prepareIn(tx, s, { ...ref, step: step + 1 }, async () => whole, claims),
              };
            return found;
          }),
        );
        // A deleted or terminated Session: nothing more is recorded; the workflow stops it.
        if (!state) return (stopped = true);
        answered = state.answered;
        stopped = state.stopped;
        return stopped || answered.length === toolUseIds.length;
      },
      {
        timeoutMs: wait!.ms,
        recheckMs: wait!.recheckMs ?? RECHECK_MS,
        signal: Context.current().cancellationSignal,
        since: watch,
      },
    );
    return { end: end === 'ready' && stopped ? 'stopped' : end, answered, ...(next ? { next } : {}) };
  }

  /**
   * A step's start, under the Session's row lock: the Thread's context, the whole log (`read`), the calls
   * still open or the step already recorded, the budget gate, and the step's start span appended. Run in
   * its own transaction by the step, or in the wait's transaction once that wait found the calls answered.
   */
  async function prepareIn(
    tx: EntityManager,
    s: SessionEntity,
    { threadId, turn, step }: ModelStepRef,
    read: () => Promise<SessionEventEntity[]>,
    /** Where the step's claim on its model request is left (released by the caller if the transaction fails). */
    claims: Array<() => void>,
  ) {
    const prefix = threadKeyPrefix(threadId);
    const key = `${prefix}turn:${turn}:step:${step}`;
    const own = (e: StoredEvent): StoredEvent => (threadId ? { ...e, sessionThreadId: threadId } : e);
    const thread = await threadContext(tx, s, threadId);
    // A delegate Thread that is gone or archived takes no more steps.
    if (!thread || thread.closed) return undefined;
    // The whole log, read under the row lock: which keys are recorded needs no other look.
    const whole = await read();
    // The Thread's own log out of the Session's one log (its status events read as the Session's).
    const events = threadLog(whole, threadId);
    // Calls still open come first: the model is asked again only when every call is answered.
    const pending = openCalls(events);
    if (pending) return { pending: withAnswered(pending, events) };
    const done = events.some((e) => e.idempotencyKey === `${key}:model_end`);
    if (done) return { done: events };
    // The pre-request gate: a requires_action above outranks it; nothing is sent once the cap is reached.
    if (budgetReached(s.budget as Budget | null, (s.usage as SessionUsage).list_cost))
      return { pending: { stopReason: 'budget_reached' as const } };
    // One model request per step at a time in this process (ADR 0019 "One request per step").
    const flight = flights.claim(`${s.id}/${key}`);
    if ('busy' in flight) return { busy: flight.busy };
    claims.push(flight.release);
    // Failed attempts of this request so far (each recorded once): the next start span is numbered by them.
    const failures = events.filter((e) => e.idempotencyKey?.startsWith(`${key}:failed:`)).length;
    const planned: StoredEvent[] = [];
    if (thread.status === 'rescheduling')
      planned.push(own(runningAgain(thread, `${key}:resumed:${failures}`)));
    const startKey = failures ? `${key}:model_start:${failures}` : `${key}:model_start`;
    planned.push(own(internal('span.model_request_start', {}, startKey)));
    const byKey = new Map(whole.map((e) => [e.idempotencyKey ?? '', e]));
    const started = await log.append(
      tx,
      s,
      planned.filter((e) => !byKey.has(e.idempotencyKey!)),
      new Date(),
      { unrecorded: true },
    );
    // The start span just appended (a retried attempt's was already in the log).
    const startId = (started.find((e) => e.idempotencyKey === startKey) ?? byKey.get(startKey))?.id ?? '';
    return {
      release: flight.release,
      agent: thread.agent,
      thread,
      snapshot: s.agent as unknown as CoordinatorSnapshot,
      vaultIds: s.vaultIds ?? [],
      messages: transcript(events),
      failures,
      startId,
      traceparent: turnTraceparent(events),
      // Frozen on the Session at create: no query (a Session from before the freeze reads them).
      prompt: await threadPromptInputs(tx, s, thread, sessions),
      usageEstimate: estimateFromUsage(events),
      // Replies of this turn cut at max_tokens and continued so far.
      continuations: events.filter(
        (e) => e.idempotencyKey?.startsWith(`${prefix}turn:${turn}:`) && e.body._stop_reason === 'max_tokens',
      ).length,
    };
  }

  async function runStep(ref: ModelStepRef, ready?: Ready): Promise<StepOutcome> {
    const { sessionId, threadId, turn, step } = ref;
    if (!deps.model) throw ApplicationFailure.nonRetryable('no model endpoint is configured');
    if ('unavailable' in deps.model) throw ApplicationFailure.nonRetryable(deps.model.unavailable);
    const model = deps.model;
    // A delegate's keys live under `thread:<id>:` (ADR 0017); the primary's are as they always were.
    const prefix = threadKeyPrefix(threadId);
    const key = `${prefix}turn:${turn}:step:${step}`;
    // The step reads the Session's log once (ADR 0004): compaction and the request share that read, a
    // later look reads only what was appended since — as does the next step (the process's log cache).
    const reader = log.reader(sessionId, logs);
    // Each Thread's transcript is compacted on its own (a delegate's with its Thread's keys and usage).
    if (step === 0 && !ready)
      await compactIfNeeded(
        log,
        reader,
        model,
        sessionId,
        turn,
        compaction,
        deps.prices ?? {},
        deps.metrics,
        threadId,
      );
    // Prepared already when the in-activity wait found this step's inputs ready (one transaction for both).
    const prepared = ready
      ? ready.prepared
      : await claiming((claims) =>
          log.withOpenSession(sessionId, (tx, s) => prepareIn(tx, s, ref, () => reader.read(tx), claims)),
        );
    if (!prepared) return { stopReason: 'end_turn' };
    if ('pending' in prepared) return prepared.pending!;
    if ('done' in prepared)
      return withAnswered(doneOutcome(prepared.done!, key, `${prefix}turn:${turn}:`), prepared.done!);
    if ('busy' in prepared) {
      // Another attempt of this step in this process is asking the model (an attempt whose workflow run
      // was lost, or that Temporal gave up on): its reply, once in the log, answers this one.
      await untilLanded(prepared.busy!, Context.current().cancellationSignal);
      return runStep(ref);
    }
    try {
      return await requestStep(ref, prepared, model);
    } finally {
      prepared.release();
    }
  }

  /** The model request of a prepared step, and its reply's events appended once. */
  async function requestStep(
    ref: ModelStepRef,
    prepared: NonNullable<Extract<Awaited<ReturnType<typeof prepareIn>>, { agent: unknown }>>,
    model: ModelClient,
  ): Promise<StepOutcome> {
    const { sessionId, threadId, turn, step } = ref;
    const prefix = threadKeyPrefix(threadId);
    const key = `${prefix}turn:${turn}:step:${step}`;
    const own = (e: StoredEvent): StoredEvent => (threadId ? { ...e, sessionThreadId: threadId } : e);
    const { agent, startId, failures } = prepared;
    const thread = prepared.thread!;
    const context = Context.current();
    const custom = agent.tools.filter((t): t is CustomTool => t.type === 'custom');
    // MCP tools of this turn (listed once per turn); a server that cannot be listed is left out of the
    // turn and reported once per turn as a session.error naming it.
    let mcpTools: DeclaredMcpTool[] = [];
    if (deps.mcp && (agent.mcp_servers ?? []).length) {
      const declared = await deps.mcp.declare(
        threadId ? `${sessionId}/${threadId}` : sessionId,
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
              own(
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
                  `${prefix}turn:${turn}:mcp_error:${f.server}`,
                ),
              ),
            ),
            new Date(),
          ),
        );
    }
    // What the model sees (docs/api-guide.md "What the model sees"): libs/domain/sessions model-request.ts.
    const prompt = prepared.prompt!;
    // A coordinator's primary Thread also gets the platform tools (list_agents, send_to_agent, consult_advisor).
    const snapshot = prepared.snapshot!;
    const { system, tools, betas } = composeModelRequest({
      agent,
      platformTools: platformTools(snapshot, thread.primary),
      skills: prompt.skills,
      memoryStores: prompt.memoryStores,
      mcpTools: mcpTools.map((t) => ({
        name: t.modelName,
        description: t.description,
        input_schema: t.input_schema,
      })),
    });
    // Request admission (docs/api-guide.md "What the model is sent"): the next prompt estimated from the
    // last usage plus what was appended since (else from the request text) must leave the profile's
    // window room for output; max_tokens, thinking, effort and speed come from the profile.
    const profile = profileOf(agent.model.id, deps.profiles);
    const messages = withContinuation(prepared.messages!);
    const estimate =
      prepared.usageEstimate ??
      Math.ceil(JSON.stringify({ system, tools, messages }).length / CHARS_PER_TOKEN);
    const params = requestParameters(profile, agent.model, estimate);
    if ('refused' in params)
      throw await recordFailure(
        log,
        sessionId,
        thread,
        key,
        failures,
        startId,
        new ModelRequestError(params.refused, null, false),
        true,
        tools,
      );
    // The reply's agent.message and agent.thinking ids are chosen now, so that previews name the events they precede.
    const messageId = newId('sessionEvent');
    const thinkingId = newId('sessionEvent');
    // Previews stream on the primary Thread only (a delegate's replies are not previewed).
    const previews = thread.primary ? previewPublisher(log, sessionId, messageId) : NO_PREVIEWS;
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
          'gen_ai.request.max_tokens': params.max_tokens,
          'mango.session.id': sessionId,
          ...(threadId ? { 'mango.session_thread.id': threadId } : {}),
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
          ...params,
          ...(system ? { system } : {}),
          ...(tools.length ? { tools } : {}),
          messages,
        },
        {
          signal: context.cancellationSignal,
          onText: (index, text) => previews.onText(index, text),
          onThinking: () => previews.onThinking(thinkingId),
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
              own(
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
        throw new CancelledFailure('the turn was interrupted');
      }
      throw await recordFailure(
        log,
        sessionId,
        thread,
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
    // A reply cut at max_tokens: a tool call it was still writing is incomplete and dropped; the text so
    // far is recorded and, with no complete call to run, the turn continues with another request
    // (at most MAX_TOKENS_CONTINUATIONS times a turn).
    const cut = response.stop_reason === 'max_tokens';
    const content =
      cut && response.content.at(-1)?.type === 'tool_use' ? response.content.slice(0, -1) : response.content;
    const text = content
      .filter((b) => b.type === 'text')
      .map((b) => ({ type: 'text', text: (b as { text: string }).text }));
    const uses = content.filter((b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use');
    // Thinking blocks are kept exactly as returned (signatures intact): the transcript sends them back.
    const thinking = content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
    const continues = cut && uses.length === 0 && prepared.continuations! < MAX_TOKENS_CONTINUATIONS;
    const isCustom = (name: string) => custom.some((t) => t.name === name);
    const isPlatform = (name: string) => !isCustom(name) && isPlatformCall(name, snapshot, thread.primary);
    // `auto` calls are judged before their events exist (docs/api-guide.md "The auto permission policy").
    const { evaluations: judged, usage: judgedUsage } = await autoEvaluations(
      model,
      agent,
      uses,
      (name) => isCustom(name) || isPlatform(name),
      mcpTools,
      deps.autoJudge ?? {},
      context.cancellationSignal,
    );
    const activationIds = uses.map(() => newId('sessionEvent'));
    let recorded: { before: SessionUsage; after: SessionUsage } | undefined;
    const appended = await log.withOpenSession(sessionId, async (tx, s) => {
      // A concurrent attempt of this step already recorded it (the row lock orders them): only read.
      // The step's events are appended in one statement with its model_end, so without it none is.
      const recordedBefore = await log.eventsByKeyPrefix(tx, sessionId, `${key}:model_end`);
      if (recordedBefore.length)
        return { uses: await log.eventsByKeyPrefix(tx, sessionId, `${key}:tool_use:`) };
      const now = new Date();
      // Platform calls (a coordinator's list_agents / send_to_agent / consult_advisor) are decided and
      // carried out here, in the transaction that records them (thread-calls.ts).
      const platformEvents: StoredEvent[] = [];
      // Calls answered within this step, by index: platform calls and Skill activations.
      const answered = new Map<number, { text: string; isError: boolean }>();
      for (const [i, u] of uses.entries())
        if (isPlatform(u.name)) {
          const done = await carryOutPlatformCall(
            tx,
            s,
            snapshot,
            u.name,
            u.input,
            `${key}:platform:${i}`,
            now,
          );
          platformEvents.push(...done.events);
          answered.set(i, done.result);
        } else if (isActivation(u.name, agent, prompt.skills.length > 0))
          // Skill activations are answered here, from Mango's kept copy (session-prompt.ts).
          answered.set(i, await answerActivation(tx, prompt.skills, u.input));
      const planned: StoredEvent[] = [
        ...(thinking.length
          ? [{ ...internal('agent.thinking', { _blocks: thinking }, `${key}:thinking`), id: thinkingId }]
          : []),
        // Web tools the endpoint ran, before the reply's text (their blocks precede it in the transcript).
        ...serverToolEvents(response.content, key),
        ...(text.length
          ? [{ ...internal('agent.message', { content: text }, `${key}:message`), id: messageId }]
          : []),
        ...uses.map((u, i) => {
          if (answered.has(i))
            return {
              ...internal(
                'agent.tool_use',
                { name: u.name, input: u.input, evaluated_permission: 'allow', _answered: true },
                `${key}:tool_use:${i}`,
              ),
              id: activationIds[i],
            };
          if (isCustom(u.name))
            return {
              ...internal('agent.custom_tool_use', { name: u.name, input: u.input }, `${key}:tool_use:${i}`),
              // An operator's worker may serve it (docs/operator-guide.md "Operator custom tools").
              runnable: true,
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
          const permission = evaluation ? autoPermission(evaluation) : evaluatePermission(agent, u.name);
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
        ...[...answered].map(([i, answer]) =>
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
        // What the platform calls did (Threads created, messages sent and received), after their results.
        ...platformEvents,
        internal(
          'span.model_request_end',
          {
            model_request_start_id: startId,
            is_error: false,
            ...(cut ? { _stop_reason: 'max_tokens' } : {}),
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
      // Every event of the step is the Thread's own, except what a platform call wrote for other Threads.
      const mine = planned.map((e) => (platformEvents.includes(e) || e.sessionThreadId ? e : own(e)));
      const inserted = await log.append(tx, s, mine, now, { unrecorded: true });
      if (inserted.length) {
        const add = (u: SessionUsage) => {
          const replied = addUsage(agent.model.id, u, response.usage, deps.prices ?? {});
          // The `auto` judgements' tokens count like the reply's (list cost, budget).
          return judgedUsage ? addUsage(agent.model.id, replied, judgedUsage, deps.prices ?? {}) : replied;
        };
        const before = s.usage as SessionUsage;
        const usage = add(before);
        // A delegate's usage counts against the Session's (the shared budget) and its own Thread's.
        await log.saveUsage(
          tx,
          s,
          usage,
          thread.primary
            ? undefined
            : { id: thread.id, usage: add((thread.usage ?? emptyUsage()) as SessionUsage) },
        );
        recorded = { before, after: usage };
      }
      // The step's own tool calls, just appended: no result can answer them yet.
      return { uses: inserted.filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`)), fresh: true };
    });
    // Counted once the usage is committed (a retried activity that recorded nothing counts nothing).
    if (recorded && deps.metrics) countUsage(deps.metrics, agent.model.id, response.usage, recorded);
    const decided = outcomeOf(appended?.uses ?? []);
    // Calls this attempt recorded have no result yet; an earlier attempt's may (the workflow looks).
    const outcome: StepOutcome =
      appended && 'fresh' in appended && decided.stopReason === 'tool_use'
        ? { ...decided, answered: [] }
        : decided;
    // A cut reply continues the turn the way a step of only denied calls does: the model is asked again.
    if (continues) return { stopReason: 'tool_use', toolUseIds: [], answered: [] };
    // A long-running web tool paused the reply (`pause_turn`): the next request continues it.
    if (response.stop_reason === 'pause_turn' && outcome.stopReason === 'end_turn')
      return { stopReason: 'tool_use', toolUseIds: [], answered: [] };
    return outcome;
  }
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
  thread: ThreadContext,
  key: string,
  failures: number,
  startId: string,
  err: unknown,
  lastAttempt: boolean,
  tools: Parameters<typeof failureMessage>[1],
): Promise<unknown> {
  if (!(err instanceof ModelRequestError)) return err; // not the model: retried without a session.error
  const retrying = err.retryable && !lastAttempt;
  const own = (e: StoredEvent): StoredEvent =>
    thread.sessionThreadId ? { ...e, sessionThreadId: thread.sessionThreadId } : e;
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
      planned.push(
        thread.primary
          ? internal('session.status_rescheduled', {}, `${key}:rescheduled:${failures}`)
          : internal(
              'session.thread_status_rescheduled',
              { session_thread_id: thread.id, agent_name: thread.agentName },
              `${key}:rescheduled:${failures}`,
            ),
      );
    }
    await log.append(tx, s, planned.map(own), new Date());
  });
  return retrying
    ? err
    : ApplicationFailure.create({ message: err.message, type: MODEL_REQUEST_EXHAUSTED, nonRetryable: true });
}

/**
 * A step's tool calls with the ones the log read under the row lock already answers (`answered`): the
 * workflow then needs no look of its own, since any later result is signalled to it.
 */
function withAnswered(outcome: StepOutcome, log: readonly SessionEventEntity[]): StepOutcome {
  if (outcome.stopReason !== 'tool_use') return outcome;
  const ids = new Set(outcome.toolUseIds);
  const answered = log.filter((e) => e.toolUseId && ids.has(e.toolUseId)).map((e) => e.toolUseId!);
  return { ...outcome, answered: [...new Set(answered)] };
}

/** What a model step asks for: the pure decision (libs/domain/sessions `stepOutcome`) over its tool calls. */
function outcomeOf(uses: SessionEventEntity[]): StepOutcome {
  return stepOutcome(uses);
}

/**
 * A step already recorded (a retried activity): the same answer as the first time — a continuation when
 * its reply was cut at max_tokens with no complete call and the turn had continuations left.
 */
function doneOutcome(events: SessionEventEntity[], key: string, turnKey: string): StepOutcome {
  const uses = events.filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`));
  const end = events.find((e) => e.idempotencyKey === `${key}:model_end`);
  if (end?.body._stop_reason === 'max_tokens' && uses.length === 0) {
    const before = events.filter(
      (e) =>
        e.idempotencyKey?.startsWith(turnKey) &&
        e.body._stop_reason === 'max_tokens' &&
        Number(e.seq) < Number(end.seq),
    ).length;
    if (before < MAX_TOKENS_CONTINUATIONS) return { stopReason: 'tool_use', toolUseIds: [] };
  }
  return outcomeOf(uses);
}

/** A Thread's status event when a rescheduled request is tried again (the primary's is the Session's). */
function runningAgain(thread: ThreadContext, key: string): StoredEvent {
  return thread.primary
    ? internal('session.status_running', {}, key)
    : internal(
        'session.thread_status_running',
        { session_thread_id: thread.id, agent_name: thread.agentName },
        key,
      );
}

/**
 * What a Thread's prompt lists: the primary's frozen inputs; a delegate's own Skill pins (staged below
 * `skills/.agents/<agent_id>/` by the worker, unless it is the coordinator itself as `self`) and the
 * Session's Memory Stores (one shared sandbox).
 */
async function threadPromptInputs(
  tx: EntityManager,
  s: Parameters<SessionRepository['promptInputs']>[1],
  thread: ThreadContext,
  sessions: SessionRepository,
): Promise<PromptInputs> {
  const base = await sessions.promptInputs(tx, s);
  if (thread.primary) return base;
  const pins = (thread.agent.skills ?? []).map((p) => ({ skill_id: p.skill_id, version: p.version }));
  const self = (s.agent as { id?: string }).id;
  const skills = skillEntries(pins, pins.length ? await skillVersionRows(tx, pins) : []).map((k) =>
    thread.agentId && thread.agentId !== self
      ? { ...k, path: `skills/.agents/${thread.agentId}/${k.name}/` }
      : k,
  );
  return { skills, memoryStores: base.memoryStores };
}

/** A delegate's replies are not previewed. */
const NO_PREVIEWS = { onText: () => undefined, onThinking: () => undefined, close: async () => undefined };

/** A Thread's usage before its first request. */
function emptyUsage(): SessionUsage {
  return {} as SessionUsage;
}
