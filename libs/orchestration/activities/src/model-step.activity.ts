import type { ModelClient } from '@mango/adapter-model';
import {
  isCustomTool,
  isPlatformCall,
  type ModelProfileOverrides,
  type PriceTable,
  readReply,
  recordedStepOutcome,
  stepKey,
  withAnswered,
} from '@mango/domain-sessions';
import { type SessionLog, SessionLogCache, type SessionRepository } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { ModelStepRef, StepOutcome, StepsOutcome } from '@mango/workflows';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { type AutoJudgeSettings, autoEvaluations } from './auto-permission';
import { compactIfNeeded } from './compaction';
import type { McpRuntime } from './mcp.activities';
import { callModel, type StepAttempt } from './model-call';
import { previewPublisher } from './preview-publisher';
import { recordReply } from './record-reply';
import { mayContinue } from './step-continuation';
import { claiming, StepFlights, untilLanded } from './step-flights';
import { type PrepareInput, type PreparedStep, prepareStep, type StartedStep } from './step-prepare';
import { composeStepRequest, declareMcpTools } from './step-request';
import { awaitResults, type ReadyStep, type ToolResultWait } from './step-wait';

/** The model endpoint and how it is used: shared by the model step and the outcome grader. */
export interface ModelSettings {
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
  /** The in-activity wait for a step's tool results (ADR 0019); absent: every step returns to the workflow. */
  toolResultWait?: ToolResultWait;
}

/** What a model step needs: the Session log and the Sessions (injected), and the model settings. */
export interface ModelStepDeps extends ModelSettings {
  log: SessionLog;
  /** Prompt inputs frozen on the Session. */
  sessions: SessionRepository;
  /** The logs earlier steps of this process read: a step reads only what was appended since. */
  logs?: SessionLogCache;
}

/**
 * One model step: the transcript from one read of the log, the model request (no transaction open
 * across it), its events appended once under deterministic idempotency keys. The parts:
 * - the wait for a step's tool results (step-wait.ts, ADR 0019), which may start the next step;
 * - the step's start under the row lock (step-prepare.ts);
 * - the request: MCP tools and composition (step-request.ts), the call with its span, metrics and
 *   cancellation (model-call.ts);
 * - the reply recorded (record-reply.ts), its events planned by the domain (`planReplyEvents`).
 */
export function createModelStep(deps: ModelStepDeps): (ref: ModelStepRef) => Promise<StepsOutcome> {
  const flights = new StepFlights();
  const parts: StepParts = {
    deps,
    logs: deps.logs ?? new SessionLogCache(),
    prepare: (input) => prepareStep({ log: deps.log, sessions: deps.sessions, flights }, input),
  };
  return (ref) => modelSteps(parts, ref);
}

/** What the steps of one process share: the deps, the logs read so far and the step start. */
interface StepParts {
  deps: ModelStepDeps;
  logs: SessionLogCache;
  prepare: (input: PrepareInput) => Promise<PreparedStep>;
}

/**
 * Steps `ref.step`, `ref.step + 1`, … (ADR 0019): after a step that ended in sandbox tool calls the
 * activity waits up to `wait.ms` for their results (woken by the relay's notices, read under the row
 * lock) and, when all are in and nothing closed the turn's calls, runs the next step itself. Each step is
 * the same idempotent step as alone: a retried activity takes the steps already in the log from the log
 * (their model_end), and the model is asked again only for a step that recorded no reply.
 */
async function modelSteps(parts: StepParts, ref: ModelStepRef): Promise<StepsOutcome> {
  const wait = parts.deps.toolResultWait;
  const maxSteps = Math.max(1, ref.maxSteps ?? 1);
  const context = Context.current();
  const began = Date.now();
  let ready: ReadyStep | undefined;
  for (let ran = 1, step = ref.step; ; ran++, step++) {
    // Watched from before the step commits its tool calls: a result (which can only follow its call)
    // always wakes the watch, so the wait needs no look until something did.
    const watch = wait && ran < maxSteps ? wait.wakes.watch(ref.sessionId) : undefined;
    let outcome: StepOutcome;
    try {
      outcome = await modelStep(parts, { ...ref, step }, ready);
    } catch (err) {
      watch?.close();
      throw err;
    }
    const counted: StepsOutcome = ref.maxSteps === undefined ? outcome : { ...outcome, steps: ran };
    const window = { ran, maxSteps, waitMs: wait?.ms ?? 0, elapsedMs: Date.now() - began };
    if (!wait || !mayContinue(outcome, { ...window, timeoutMs: context.info.startToCloseTimeoutMs })) {
      watch?.close();
      return counted;
    }
    const waited = await awaitResults(
      { log: parts.deps.log, logs: parts.logs, wait, prepare: parts.prepare },
      { ref: { ...ref, step }, toolUseIds: outcome.toolUseIds, watch },
    );
    // (A look that prepared the next step, and so claimed it, always ends the wait 'ready'.)
    if (waited.end === 'aborted') throw new CancelledFailure('the turn was interrupted');
    // Past the window (or stopped): the workflow waits as before; the calls the last look saw answered
    // are said (any later result reaches it as a signal).
    // (Only a workflow that passed maxSteps > 1 gets here: the count is always said.)
    if (waited.end !== 'ready') return { ...outcome, answered: waited.answered, steps: ran };
    ready = waited.next;
  }
}

/**
 * One step. A log is kept across the steps of a turn only: a turn that stops (or a step that fails) lets
 * it go, so an idle Session holds no memory here.
 */
async function modelStep(parts: StepParts, ref: ModelStepRef, ready?: ReadyStep): Promise<StepOutcome> {
  try {
    const outcome = await runStep(parts, ref, ready);
    if (outcome.stopReason !== 'tool_use') parts.logs.forget(ref.sessionId);
    return outcome;
  } catch (err) {
    parts.logs.forget(ref.sessionId);
    // A claim the wait made for this step is given back however the step failed (releasing is idempotent).
    if (ready?.prepared && 'release' in ready.prepared) ready.prepared.release();
    throw err;
  }
}

/** One step: compaction before a turn's first, its start (or what stops it), then its request. */
async function runStep(parts: StepParts, ref: ModelStepRef, ready?: ReadyStep): Promise<StepOutcome> {
  const { deps } = parts;
  const { log } = deps;
  if (!deps.model) throw ApplicationFailure.nonRetryable('no model endpoint is configured');
  if ('unavailable' in deps.model) throw ApplicationFailure.nonRetryable(deps.model.unavailable);
  const model = deps.model;
  // The step reads the Session's log once (ADR 0004): compaction and the request share that read, a
  // later look reads only what was appended since — as does the next step (the process's log cache).
  const reader = log.reader(ref.sessionId, parts.logs);
  // Each Thread's transcript is compacted on its own (a delegate's with its Thread's keys and usage).
  if (ref.step === 0 && !ready)
    await compactIfNeeded(
      {
        log,
        model,
        settings: { compactAtTokens: deps.compactAtTokens, profiles: deps.profiles },
        prices: deps.prices ?? {},
        metrics: deps.metrics,
      },
      { reader, sessionId: ref.sessionId, turn: ref.turn, threadId: ref.threadId },
    );
  // Prepared already when the in-activity wait found this step's inputs ready (one transaction for both).
  const prepared = ready
    ? ready.prepared
    : await claiming((claims) =>
        log.withOpenSession(ref.sessionId, (tx, session) =>
          parts.prepare({ tx, session, ref, read: () => reader.read(tx), claims }),
        ),
      );
  if (!prepared) return { stopReason: 'end_turn' };
  if ('pending' in prepared) return prepared.pending;
  if ('done' in prepared) return withAnswered(recordedStepOutcome(prepared.done, ref), prepared.done);
  if ('busy' in prepared) {
    // Another attempt of this step in this process is asking the model (an attempt whose workflow run
    // was lost, or that Temporal gave up on): its reply, once in the log, answers this one.
    await untilLanded(prepared.busy, Context.current().cancellationSignal);
    return runStep(parts, ref);
  }
  try {
    return await requestStep(deps, { ref, step: prepared, model });
  } finally {
    prepared.release();
  }
}

/** The model request of a started step, the `auto` judgement of its calls, and its reply recorded once. */
async function requestStep(
  deps: ModelStepDeps,
  { ref, step, model }: { ref: ModelStepRef; step: StartedStep; model: ModelClient },
): Promise<StepOutcome> {
  const { sessionId, threadId } = ref;
  const signal = Context.current().cancellationSignal;
  const key = stepKey(ref);
  const attempt: StepAttempt = {
    sessionId,
    turn: ref.turn,
    thread: step.thread,
    key,
    failures: step.failures,
    startId: step.startId,
    traceparent: step.traceparent,
  };
  const mcpTools = await declareMcpTools(deps, { ref, step, signal });
  const request = await composeStepRequest(deps, { attempt, step, mcpTools });
  // The reply's agent.message and agent.thinking ids are chosen now, so that previews name the events they precede.
  const ids = { message: newId('sessionEvent'), thinking: newId('sessionEvent') };
  // Previews stream on the primary Thread only (a delegate's replies are not previewed).
  const previews = step.thread.primary ? previewPublisher(deps.log, sessionId, ids.message) : NO_PREVIEWS;
  const response = await callModel(
    { log: deps.log, model, metrics: deps.metrics },
    { attempt, request, previews, thinkingId: ids.thinking },
  );
  const reply = readReply(response, step.continuations);
  const { agent, snapshot, thread } = step;
  // `auto` calls are judged before their events exist (docs/api-guide.md "The auto permission policy").
  const judged = await autoEvaluations(
    model,
    {
      agent,
      uses: reply.uses,
      unjudged: (name) => isCustomTool(agent, name) || isPlatformCall(name, snapshot, thread.primary),
      mcpTools,
    },
    deps.autoJudge ?? {},
    signal,
  );
  return recordReply(deps, {
    sessionId,
    threadId,
    key,
    step,
    response,
    reply,
    mcpTools,
    judged,
    ids: { ...ids, uses: reply.uses.map(() => newId('sessionEvent')) },
  });
}

/** A delegate's replies are not previewed. */
const NO_PREVIEWS = { onText: () => undefined, onThinking: () => undefined, close: async () => undefined };
