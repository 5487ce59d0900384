import { ModelRequestError, type ModelResponse } from '@mango/adapter-model';
import type { AgentDefinition } from '@mango/domain-agents';
import {
  activeOutcome,
  addUsage,
  type Budget,
  budgetReached,
  evaluationResult,
  graderRequest,
  parseGraderAnswer,
  type SessionUsage,
  transcript,
} from '@mango/domain-sessions';
import { SessionEventEntity, type SessionLog } from '@mango/persistence';
import { MODEL_REQUEST_ATTEMPTS, type GradeOutcome, type OutcomeActivities } from '@mango/workflows';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ModelSettings } from './model-step.activity';
import { countUsage, internal, type StoredEvent } from './step-events';

/** Output tokens of one grader answer (a verdict and its explanation). */
export const GRADER_MAX_TOKENS = 2048;
/** The activity heartbeats this often; a `span.outcome_evaluation_ongoing` is appended every `ongoingMs`. */
const HEARTBEAT_MS = 1000;
const DEFAULT_ONGOING_MS = 10_000;

const UNMATCHED_START = (events: SessionEventEntity[], outcomeId: string): string => {
  let open = '';
  for (const e of events) {
    if (e.body.outcome_id !== outcomeId) continue;
    if (e.type === 'span.outcome_evaluation_start') open = e.id;
    if (e.type === 'span.outcome_evaluation_end') open = '';
  }
  return open;
};

/**
 * The outcome grader (docs/api-guide.md "Outcomes"): one grader model request per evaluation, with the
 * transcript and the rubric only (libs/domain/sessions outcome.ts `graderRequest`) and the Session's
 * model. Its events carry deterministic keys (`turn:<n>:outcome:<round>:…`), so a retried activity
 * appends nothing twice; its usage is added to the Session's (and so counts against the budget).
 */
export function createOutcomeGrader(
  deps: ModelSettings & { ongoingMs?: number },
  log: SessionLog,
): OutcomeActivities {
  const ongoingMs = deps.ongoingMs ?? DEFAULT_ONGOING_MS;
  return {
    async gradeOutcome({ sessionId, turn, round }): Promise<GradeOutcome> {
      if (!deps.model) throw ApplicationFailure.nonRetryable('no model endpoint is configured');
      if ('unavailable' in deps.model) throw ApplicationFailure.nonRetryable(deps.model.unavailable);
      const model = deps.model;
      const key = `turn:${turn}:outcome:${round}`;
      const prepared = await log.withOpenSession(sessionId, async (tx, s) => {
        const events = await log.reader(sessionId).read(tx);
        const recorded = events.find((e) => e.idempotencyKey === `${key}:end`);
        if (recorded) return { done: recorded.body.result as GradeOutcome };
        const active = activeOutcome(events);
        if (!active) return { done: 'none' as const };
        // Only an outcome the agent has worked on: one defined during this turn waits for its own turn.
        if (!events.some((e) => e.type === 'session.status_running' && Number(e.seq) > active.definedSeq))
          return { done: 'none' as const };
        if (budgetReached(s.budget as Budget | null, (s.usage as SessionUsage).list_cost))
          return { done: 'budget_reached' as const };
        const at = { outcome_id: active.outcome_id, iteration: active.iteration };
        await log.append(
          tx,
          s,
          [
            internal('span.outcome_evaluation_start', at, `${key}:start`),
            internal('span.outcome_evaluation_ongoing', at, `${key}:ongoing:0`),
          ],
          new Date(),
        );
        const start = await tx.findOne(SessionEventEntity, {
          where: { sessionId, idempotencyKey: `${key}:start` },
        });
        return {
          active,
          startId: start?.id ?? '',
          modelId: (s.agent as unknown as AgentDefinition).model.id,
          // The transcript and the rubric only: no tools, no system prompt of the agent, no files.
          request: graderRequest({
            description: active.description,
            rubric: active.rubric,
            messages: transcript(events),
            iteration: active.iteration,
          }),
        };
      });
      if (!prepared) return 'none';
      if ('done' in prepared) return prepared.done!;
      const { active, startId, modelId, request } = prepared;
      const at = { outcome_id: active.outcome_id, iteration: active.iteration };
      const context = Context.current();
      let beats = 0;
      let beating: Promise<unknown> = Promise.resolve();
      const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      // The grader's heartbeat on the stream while its request runs.
      const ongoing = setInterval(() => {
        beats += 1;
        const n = beats;
        beating = log
          .withOpenSession(sessionId, (tx, s) =>
            log.append(
              tx,
              s,
              [internal('span.outcome_evaluation_ongoing', at, `${key}:ongoing:${n}`)],
              new Date(),
            ),
          )
          .catch(() => undefined);
      }, ongoingMs);
      let response: ModelResponse | undefined;
      let failure: string | undefined;
      try {
        response = await model.createMessage(
          { model: modelId, max_tokens: GRADER_MAX_TOKENS, ...request },
          { signal: context.cancellationSignal },
        );
      } catch (err) {
        // An interrupt: the workflow's interruptOutcome ends the evaluation `interrupted`.
        if (context.cancellationSignal.aborted)
          throw new CancelledFailure('the outcome evaluation was interrupted');
        const retryable = err instanceof ModelRequestError ? err.retryable : true;
        if (retryable && context.info.attempt < MODEL_REQUEST_ATTEMPTS) throw err;
        failure =
          err instanceof ModelRequestError && err.status
            ? `The grader request failed (the model endpoint answered ${err.status}).`
            : 'The grader request failed.';
      } finally {
        clearInterval(heartbeat);
        clearInterval(ongoing);
        // No heartbeat event may land after the evaluation's end.
        await beating;
      }
      const text = (response?.content ?? [])
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join('');
      const graded = failure ? { verdict: 'failed' as const, explanation: failure } : parseGraderAnswer(text);
      const result = evaluationResult(graded.verdict, active.iteration, active.maxIterations);
      const usage = response?.usage;
      let counted: { before: SessionUsage; after: SessionUsage } | undefined;
      const outcome = await log.withOpenSession(sessionId, async (tx, s) => {
        const planned: StoredEvent[] = [
          internal(
            'span.outcome_evaluation_end',
            {
              outcome_evaluation_start_id: startId,
              ...at,
              result,
              explanation: graded.explanation,
              usage: {
                input_tokens: usage?.input_tokens ?? 0,
                output_tokens: usage?.output_tokens ?? 0,
                cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
                cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
              },
            },
            `${key}:end`,
          ),
        ];
        const inserted = await log.append(tx, s, planned, new Date());
        if (inserted.length && usage) {
          const before = s.usage as SessionUsage;
          const after = addUsage(modelId, before, usage, deps.prices ?? {});
          await log.saveUsage(tx, s, after);
          counted = { before, after };
        }
        if (inserted.length) return result;
        const prior = await tx.findOne(SessionEventEntity, {
          where: { sessionId, idempotencyKey: `${key}:end` },
        });
        return (prior?.body.result as GradeOutcome | undefined) ?? result;
      });
      if (counted && usage && deps.metrics) countUsage(deps.metrics, modelId, usage, counted);
      return outcome ?? 'none';
    },

    async interruptOutcome({ sessionId, turn }) {
      await log.withOpenSession(sessionId, async (tx, s) => {
        const events = await log.reader(sessionId).read(tx);
        const active = activeOutcome(events);
        if (!active) return;
        await log.append(
          tx,
          s,
          [
            internal(
              'span.outcome_evaluation_end',
              {
                outcome_evaluation_start_id: UNMATCHED_START(events, active.outcome_id),
                outcome_id: active.outcome_id,
                iteration: active.iteration,
                result: 'interrupted',
                explanation: 'The outcome was interrupted.',
                usage: {
                  input_tokens: 0,
                  output_tokens: 0,
                  cache_creation_input_tokens: 0,
                  cache_read_input_tokens: 0,
                },
              },
              `turn:${turn}:outcome_interrupted`,
            ),
          ],
          new Date(),
        );
      });
    },
  };
}
