import type { AgentDefinition } from '@mango/domain-agents';
import {
  type Budget,
  budgetReached,
  type CoordinatorSnapshot,
  estimateFromUsage,
  openCalls,
  type SessionUsage,
  stepKey,
  threadKeyPrefix,
  threadLog,
  transcript,
  turnTraceparent,
  withAnswered,
} from '@mango/domain-sessions';
import {
  type PromptInputs,
  type SessionEntity,
  type SessionEventEntity,
  type SessionLog,
  type SessionRepository,
  skillEntries,
  skillVersionRows,
} from '@mango/persistence';
import type { ModelStepRef, StepOutcome } from '@mango/workflows';
import type { EntityManager } from 'typeorm';
import { internal, type StoredEvent } from './step-events';
import type { StepFlights } from './step-flights';
import { type ThreadContext, threadContext } from './thread-context';

/** What preparing a step needs: the log, the Sessions (prompt inputs) and this process's step claims. */
export interface StepPrepareDeps {
  log: SessionLog;
  sessions: SessionRepository;
  flights: StepFlights;
}

/** A step ready for its model request: the claim on it, and what the request is made of. */
export interface StartedStep {
  /** Gives the step's claim back (idempotent). */
  release: () => void;
  agent: AgentDefinition;
  thread: ThreadContext;
  snapshot: CoordinatorSnapshot;
  vaultIds: string[];
  messages: ReturnType<typeof transcript>;
  /** Failed attempts of this request so far. */
  failures: number;
  /** The step's `span.model_request_start` id. */
  startId: string;
  traceparent: string | undefined;
  prompt: PromptInputs;
  usageEstimate: number | undefined;
  /** Replies of this turn cut at max_tokens and continued so far. */
  continuations: number;
}

/**
 * A prepared step: gone (a closed Thread: `undefined`), calls still open or the budget reached
 * (`pending`), recorded already (`done`: the log), another attempt in this process asking the model
 * (`busy`), or started.
 */
export type PreparedStep =
  | undefined
  | { pending: StepOutcome }
  | { done: SessionEventEntity[] }
  | { busy: Promise<void> }
  | StartedStep;

/** Where and for which step {@link prepareStep} works. */
export interface PrepareInput {
  tx: EntityManager;
  session: SessionEntity;
  ref: ModelStepRef;
  /** The whole log, read under the row lock. */
  read: () => Promise<SessionEventEntity[]>;
  /** Where the step's claim on its model request is left (released by the caller if the transaction fails). */
  claims: Array<() => void>;
}

/**
 * A step's start, under the Session's row lock: the Thread's context, the whole log (`read`), the calls
 * still open or the step already recorded, the budget gate, and the step's start span appended. Run in
 * its own transaction by the step, or in the wait's transaction once that wait found the calls answered.
 */
export async function prepareStep(deps: StepPrepareDeps, input: PrepareInput): Promise<PreparedStep> {
  const { tx, session: s, ref, claims } = input;
  const key = stepKey(ref);
  const thread = await threadContext(tx, s, ref.threadId);
  // A delegate Thread that is gone or archived takes no more steps.
  if (!thread || thread.closed) return undefined;
  // The whole log, read under the row lock: which keys are recorded needs no other look.
  const whole = await input.read();
  // The Thread's own log out of the Session's one log (its status events read as the Session's).
  const events = threadLog(whole, ref.threadId);
  // Calls still open come first: the model is asked again only when every call is answered.
  const pending = openCalls(events);
  if (pending) return { pending: withAnswered(pending, events) };
  if (events.some((e) => e.idempotencyKey === `${key}:model_end`)) return { done: events };
  // The pre-request gate: a requires_action above outranks it; nothing is sent once the cap is reached.
  if (budgetReached(s.budget as Budget | null, (s.usage as SessionUsage).list_cost))
    return { pending: { stopReason: 'budget_reached' } };
  // One model request per step at a time in this process (ADR 0019 "One request per step").
  const flight = deps.flights.claim(`${s.id}/${key}`);
  if ('busy' in flight) return { busy: flight.busy };
  claims.push(flight.release);
  // Failed attempts of this request so far (each recorded once): the next start span is numbered by them.
  const failures = events.filter((e) => e.idempotencyKey?.startsWith(`${key}:failed:`)).length;
  const startId = await appendStart(deps.log, { tx, session: s, thread, whole, key, failures });
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
    prompt: await threadPromptInputs(tx, s, thread, deps.sessions),
    usageEstimate: estimateFromUsage(events),
    // Replies of this turn cut at max_tokens and continued so far.
    continuations: events.filter(
      (e) =>
        e.idempotencyKey?.startsWith(`${threadKeyPrefix(ref.threadId)}turn:${ref.turn}:`) &&
        e.body._stop_reason === 'max_tokens',
    ).length,
  };
}

/**
 * Appends the step's start span (and, for a rescheduled Thread, its running again) unless a retried
 * attempt already did, and answers the start span's id.
 */
async function appendStart(
  log: SessionLog,
  at: {
    tx: EntityManager;
    session: SessionEntity;
    thread: ThreadContext;
    whole: SessionEventEntity[];
    key: string;
    failures: number;
  },
): Promise<string> {
  const { thread, key, failures } = at;
  const own = (e: StoredEvent): StoredEvent =>
    thread.sessionThreadId ? { ...e, sessionThreadId: thread.sessionThreadId } : e;
  const planned: StoredEvent[] = [];
  if (thread.status === 'rescheduling') planned.push(own(runningAgain(thread, `${key}:resumed:${failures}`)));
  const startKey = failures ? `${key}:model_start:${failures}` : `${key}:model_start`;
  planned.push(own(internal('span.model_request_start', {}, startKey)));
  const byKey = new Map(at.whole.map((e) => [e.idempotencyKey ?? '', e]));
  const started = await log.append(
    at.tx,
    at.session,
    planned.filter((e) => !byKey.has(e.idempotencyKey!)),
    new Date(),
    { unrecorded: true },
  );
  // The start span just appended (a retried attempt's was already in the log).
  return (started.find((e) => e.idempotencyKey === startKey) ?? byKey.get(startKey))?.id ?? '';
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
  s: SessionEntity,
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
