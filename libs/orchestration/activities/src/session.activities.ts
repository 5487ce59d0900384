import { ModelClient, ModelRequestError, ModelResponse } from '@mango/adapter-model';
import { NewSessionEvent, SessionEventEntity, SessionLog, SessionLogReader } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import {
  MODEL_REQUEST_ATTEMPTS,
  MODEL_REQUEST_EXHAUSTED,
  type ModelStepRef,
  type SessionActivities,
  type StepOutcome,
  type TurnRef,
} from '@mango/workflows';
import { AgentDefinition, CustomTool, enabledSandboxTools, evaluatePermission } from '@mango/domain-agents';
import {
  Budget,
  budgetReached,
  COMPACTED,
  compactionPlan,
  listCost,
  MonetaryAmount,
  openCalls,
  PriceTable,
  transcript,
} from '@mango/domain-sessions';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { DeclaredMcpTool } from '@mango/domain-mcp';
import type { McpRuntime } from './mcp.activities';
import type { DataSource } from 'typeorm';
import type { MangoMetrics } from '@mango/platform-metrics';
import { contextFrom, SpanKind, SpanStatusCode, tracer } from '@mango/platform-tracing';

const MAX_TOKENS = 4096;
/** Previews are batched: at most one notice per text block this often. */
const DELTA_FLUSH_MS = 50;
/** A model step heartbeats this often (its heartbeat timeout is 10 s) for as long as it runs. */
const HEARTBEAT_MS = 1000;

/**
 * Relays text deltas of the reply being generated as previews of the agent.message that will carry
 * `eventId`, batched per block. Best effort: previews are never persisted and a lost one is not resent.
 */
function previewPublisher(log: SessionLog, sessionId: string, eventId: string) {
  const pending = new Map<number, string>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    timer = undefined;
    const batch = [...pending.entries()];
    pending.clear();
    chain = chain.then(async () => {
      for (const [index, text] of batch)
        await log.publishDelta({ sessionId, eventId, index, text }).catch(() => undefined);
    });
  };
  return {
    onText(index: number, text: string) {
      pending.set(index, (pending.get(index) ?? '') + text);
      timer ??= setTimeout(flush, DELTA_FLUSH_MS);
    },
    /** Sends what is buffered; resolves when every preview was published (before the event is appended). */
    async close(): Promise<void> {
      if (timer) clearTimeout(timer);
      flush();
      await chain;
    },
  };
}

type StoredEvent = NewSessionEvent;
const internal = (type: string, body: Record<string, unknown>, idempotencyKey: string): StoredEvent => ({
  type,
  body,
  processed: true,
  runnable: false,
  idempotencyKey,
});

/** hosted §3.4.6: the `session.error` type of a failed model request. */
function errorType(err: ModelRequestError): string {
  if (err.status === 529) return 'model_overloaded_error';
  if (err.status === 429) return 'model_rate_limited_error';
  return 'model_request_failed_error';
}

type Usage = Record<string, unknown> & {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  list_cost?: MonetaryAmount | null;
};

/** Cumulative usage after one model response, with its list cost when the model is priced. */
function addUsageWith(model: string, usage: Usage, add: ModelResponse['usage'], prices: PriceTable): Usage {
  const next: Usage = {
    ...usage,
    input_tokens: (usage.input_tokens ?? 0) + add.input_tokens,
    output_tokens: (usage.output_tokens ?? 0) + add.output_tokens,
    cache_read_input_tokens: (usage.cache_read_input_tokens ?? 0) + (add.cache_read_input_tokens ?? 0),
    cache_creation_input_tokens:
      (usage.cache_creation_input_tokens ?? 0) + (add.cache_creation_input_tokens ?? 0),
  };
  next.list_cost = listCost(model, next, prices);
  return next;
}

/**
 * Activities of the Session workflow. Every event they append carries a deterministic idempotency key
 * (`turn:<n>:step:<m>:…`), so a retried activity after a crash appends nothing twice.
 */
export function createSessionActivities(deps: {
  dataSource: DataSource;
  /** The Session log repository (default: one on `dataSource` with the default Work port). */
  sessionLog?: SessionLog;
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
}): SessionActivities {
  const compactAt = deps.compactAtTokens ?? 160_000;
  const addUsage = (model: string, usage: Usage, add: ModelResponse['usage']) =>
    addUsageWith(model, usage, add, deps.prices ?? {});
  const { dataSource } = deps;
  const log = deps.sessionLog ?? new SessionLog(dataSource);
  /** One model step: transcript from the log, the model request, its events appended once. */
  async function modelStep({ sessionId, turn, step }: ModelStepRef): Promise<StepOutcome> {
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
      if (budgetReached(s.budget as Budget | null, (s.usage as Usage).list_cost))
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
    const tools = [
      ...enabledSandboxTools(agent),
      ...custom.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })),
      ...mcpTools.map((t) => ({
        name: t.modelName,
        description: t.description,
        input_schema: t.input_schema,
      })),
    ];
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
          ...(agent.system ? { system: agent.system } : {}),
          ...(tools.length ? { tools } : {}),
          messages: prepared.messages!,
        },
        { signal: context.cancellationSignal, onText: (index, text) => previews.onText(index, text) },
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
    let recorded: { before: Usage; after: Usage } | undefined;
    const appended = await log.withOpenSession(sessionId, async (tx, s) => {
      const isCustom = (name: string) => custom.some((t) => t.name === name);
      const planned: StoredEvent[] = [
        ...(text.length
          ? [{ ...internal('agent.message', { content: text }, `${key}:message`), id: messageId }]
          : []),
        ...uses.map((u, i) => {
          if (isCustom(u.name))
            return internal(
              'agent.custom_tool_use',
              { name: u.name, input: u.input },
              `${key}:tool_use:${i}`,
            );
          const mcpTool = mcpTools.find((t) => t.modelName === u.name);
          if (mcpTool)
            return internal(
              'agent.mcp_tool_use',
              {
                name: mcpTool.toolName,
                mcp_server_name: mcpTool.serverName,
                input: u.input,
                evaluated_permission: mcpTool.permission,
                _model_name: mcpTool.modelName,
              },
              `${key}:tool_use:${i}`,
            );
          const permission = evaluatePermission(s.agent as unknown as AgentDefinition, u.name);
          return {
            ...internal(
              'agent.tool_use',
              { name: u.name, input: u.input, evaluated_permission: permission },
              `${key}:tool_use:${i}`,
            ),
            // An allowed call needs the worker: make sure the Session has a live Work item.
            runnable: permission === 'allow',
          };
        }),
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
        const before = s.usage as Usage;
        const usage = addUsage(agent.model.id, before, response.usage);
        await log.saveUsage(tx, s, usage);
        recorded = { before, after: usage };
      }
      // The step's own tool calls, looked up by key (the whole log is not read again).
      return log.eventsByKeyPrefix(tx, sessionId, `${key}:tool_use:`);
    });
    // Counted once the usage is committed (a retried activity that recorded nothing counts nothing).
    if (recorded && deps.metrics) countUsage(deps.metrics, agent.model.id, response.usage, recorded);
    return outcomeOf(appended ?? []);
  }

  return {
    async beginTurn({ sessionId, turn }: TurnRef) {
      await log.withOpenSession(sessionId, async (tx, s) => {
        await log.append(tx, s, [internal('session.status_running', {}, `turn:${turn}:running`)], new Date());
      });
    },

    async runModelStep(ref: ModelStepRef): Promise<StepOutcome> {
      // The step heartbeats for its whole life, not only across the model request: a step queued for a
      // pool connection (or in compaction) is alive, and only a dead worker misses the heartbeat timeout.
      const context = Context.current();
      const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      try {
        return await modelStep(ref);
      } finally {
        clearInterval(heartbeat);
      }
    },

    async runMcpCall({ sessionId, mcpToolUseId }) {
      if (!deps.mcp)
        throw ApplicationFailure.nonRetryable('remote MCP is not configured in this orchestrator');
      await deps.mcp.call(sessionId, mcpToolUseId);
    },

    async toolResultsReady({ sessionId, toolUseIds }) {
      if (toolUseIds.length === 0) return true;
      const rows: Array<{ n: string }> = await dataSource.query(
        `SELECT count(*) AS n FROM session_events WHERE session_id = $1 AND tool_use_id = ANY($2::text[])`,
        [sessionId, toolUseIds],
      );
      return Number(rows[0]!.n) >= toolUseIds.length;
    },

    async endTurn({ sessionId, turn, stopReason, eventIds, unrecordedError }) {
      let turnSeconds: number | undefined;
      let turnSpan: { start: Date; end: Date; traceparent?: string } | undefined;
      await log.withOpenSession(sessionId, async (tx, s) => {
        const planned: StoredEvent[] = [];
        if (unrecordedError)
          planned.push(
            internal(
              'session.error',
              {
                error: {
                  type: 'unknown_error',
                  message: unrecordedError.slice(0, 1000),
                  retry_status: { type: 'exhausted' },
                },
              },
              `turn:${turn}:error`,
            ),
          );
        if (stopReason === 'budget_reached')
          planned.push(internal('session.usage', { usage: s.usage, budget: s.budget }, `turn:${turn}:usage`));
        planned.push(
          internal(
            'session.status_idle',
            {
              stop_reason: eventIds?.length
                ? { type: stopReason, event_ids: eventIds }
                : { type: stopReason },
            },
            `turn:${turn}:idle`,
          ),
        );
        const now = new Date();
        const inserted = await log.append(tx, s, planned, now);
        // Active time (usage.active_seconds): the turn's wall time, from its status_running to this idle.
        if (inserted.some((e) => e.type === 'session.status_idle')) {
          const started = await tx.findOne(SessionEventEntity, {
            where: { sessionId, idempotencyKey: `turn:${turn}:running` },
          });
          if (started) {
            const usage = s.usage as Usage;
            const seconds = Math.max(0, (now.getTime() - started.createdAt.getTime()) / 1000);
            turnSeconds = seconds;
            const origin = await tx.findOne(SessionEventEntity, {
              where: { sessionId, type: 'user.message' },
              order: { seq: 'DESC' },
            });
            turnSpan = { start: started.createdAt, end: now, traceparent: traceparentOf(origin?.body) };
            await log.saveUsage(tx, s, {
              ...usage,
              active_seconds: Math.round(((Number(usage.active_seconds) || 0) + seconds) * 1000) / 1000,
            });
          }
        }
      });
      if (turnSeconds !== undefined)
        deps.metrics?.turnDuration.observe({ stop_reason: stopReason }, turnSeconds);
      // The turn as one span (status_running → status_idle), in the trace of the message that started it.
      if (turnSpan)
        tracer()
          .startSpan(
            'mango.session.turn',
            {
              startTime: turnSpan.start,
              attributes: {
                'mango.session.id': sessionId,
                'mango.turn': turn,
                'mango.stop_reason': stopReason,
              },
            },
            contextFrom(turnSpan.traceparent),
          )
          .end(turnSpan.end);
    },
  };
}

/** Tokens of one recorded model response, and the list cost it added (the change in the cumulative cost). */
function countUsage(
  metrics: MangoMetrics,
  model: string,
  add: ModelResponse['usage'],
  { before, after }: { before: Usage; after: Usage },
): void {
  const tokens = {
    input: add.input_tokens,
    output: add.output_tokens,
    cache_read: add.cache_read_input_tokens ?? 0,
    cache_creation: add.cache_creation_input_tokens ?? 0,
  };
  for (const [type, n] of Object.entries(tokens)) if (n > 0) metrics.modelTokens.inc({ model, type }, n);
  if (after.list_cost) {
    const cents = Number(after.list_cost.amount) - Number(before.list_cost?.amount ?? 0);
    metrics.modelListCost.inc({ model }, Math.max(0, cents) / 100);
  }
}

/**
 * Compaction near the model window (`agent.thread_context_compacted`): before a turn's first request,
 * when the previous prompt reached the threshold, the model summarizes every completed turn; the event
 * keeps the summary in internal fields (never rendered) and later transcripts start from it. Idempotent
 * per turn; the summarizing request's usage is counted like any other.
 */
async function compactIfNeeded(
  log: SessionLog,
  reader: SessionLogReader,
  model: ModelClient,
  sessionId: string,
  turn: number,
  threshold: number,
  prices: PriceTable,
  metrics?: MangoMetrics,
): Promise<void> {
  const key = `turn:${turn}:compacted`;
  const plan = await log.withOpenSession(sessionId, async (tx, s) => {
    // Read through the transaction's own connection: a second pool connection taken while this one holds
    // the Session's row lock deadlocks the pool once as many steps start at once as it has connections.
    const events = await reader.read(tx);
    if (events.some((e) => e.idempotencyKey === key)) return undefined;
    const planned = compactionPlan(events, threshold);
    if (!planned) return undefined;
    const covered = events.filter((e) => Number(e.seq) <= planned.throughSeq);
    return { ...planned, messages: transcript(covered), agent: s.agent as unknown as AgentDefinition };
  });
  if (!plan) return;
  const requested = process.hrtime.bigint();
  const observe = (outcome: 'ok' | 'error') =>
    metrics?.modelRequestDuration.observe(
      { model: plan.agent.model.id, outcome },
      Number(process.hrtime.bigint() - requested) / 1e9,
    );
  const response = await model
    .createMessage({
      model: plan.agent.model.id,
      max_tokens: MAX_TOKENS,
      system:
        'You compact conversations between a user and an AI agent. Write a faithful, complete summary of the conversation below that the agent can continue from: the user goals, decisions, facts learned, files and commands involved, tool results that matter, and open tasks. Do not address the user.',
      messages: [
        ...plan.messages,
        {
          role: 'user',
          content: [{ type: 'text', text: 'Summarize the conversation so far for continuation.' }],
        },
      ],
    })
    .then(
      (r) => {
        observe('ok');
        return r;
      },
      (err: unknown) => {
        observe('error');
        throw err;
      },
    );
  const summary = response.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
  let recorded: { before: Usage; after: Usage } | undefined;
  await log.withOpenSession(sessionId, async (tx, s) => {
    const inserted = await log.append(
      tx,
      s,
      [internal(COMPACTED, { _summary: summary, _through_seq: plan.throughSeq }, key)],
      new Date(),
    );
    if (inserted.length) {
      const before = s.usage as Usage;
      await log.saveUsage(tx, s, addUsageWith(plan.agent.model.id, before, response.usage, prices));
      recorded = { before, after: s.usage as Usage };
    }
  });
  // The summarizing request's usage is counted like any other.
  if (recorded && metrics) countUsage(metrics, plan.agent.model.id, response.usage, recorded);
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
            message: err.status ? `The model endpoint answered ${err.status}` : err.message.slice(0, 300),
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

/** What a model step asks for: sandbox runs and MCP calls for allowed calls, a confirmation for asked ones. */
function outcomeOf(uses: SessionEventEntity[]): StepOutcome {
  const ask = uses
    .filter((u) => u.type === 'agent.custom_tool_use' || u.body.evaluated_permission === 'ask')
    .map((u) => u.id);
  if (ask.length) return { stopReason: 'requires_action', eventIds: ask };
  const allowed = uses.filter((u) => u.body.evaluated_permission === 'allow');
  const run = allowed.filter((u) => u.type === 'agent.tool_use').map((u) => u.id);
  const mcp = allowed.filter((u) => u.type === 'agent.mcp_tool_use').map((u) => u.id);
  if (mcp.length) return { stopReason: 'tool_use', toolUseIds: run, mcpToolUseIds: mcp };
  if (run.length) return { stopReason: 'tool_use', toolUseIds: run };
  // Only denied calls: their error results are in the transcript; the model answers next step.
  return uses.length ? { stopReason: 'tool_use', toolUseIds: [] } : { stopReason: 'end_turn' };
}

/** The trace context the API stored on an event (`_traceparent`, internal). */
function traceparentOf(body: Record<string, unknown> | undefined): string | undefined {
  const tp = body?._traceparent;
  return typeof tp === 'string' ? tp : undefined;
}

/** The trace of the turn: the one of the latest user.message. */
function turnTraceparent(events: SessionEventEntity[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--)
    if (events[i]!.type === 'user.message') return traceparentOf(events[i]!.body);
  return undefined;
}
