import type { ModelClient } from '@mango/adapter-model';
import type { ModelProfileOverrides, PriceTable } from '@mango/domain-sessions';
import { SessionLog, SessionRepository, type SessionWakes } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { ModelStepRef, SessionActivities, StepsOutcome } from '@mango/workflows';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import type { McpRuntime } from './mcp.activities';
import { createModelStep } from './model-step.activity';
import { createOutcomeGrader } from './outcome-grader.activity';
import { createResumeActivities } from './resume.activities';
import { createTurnActivities } from './turn.activities';

/** A model step heartbeats this often (its heartbeat timeout is 10 s) for as long as it runs. */
const HEARTBEAT_MS = 1000;

/**
 * Activities of the Session workflow: the model step (model-step.activity.ts, with compaction.ts and
 * preview-publisher.ts), turn bookkeeping (turn.activities.ts) and MCP calls (mcp.activities.ts). Every
 * event they append carries a deterministic idempotency key (`turn:<n>:step:<m>:…`), so a retried
 * activity after a crash appends nothing twice.
 */
export function createSessionActivities(deps: {
  dataSource: DataSource;
  /** The Session log repository (default: one on `dataSource` with the default Work port). */
  sessionLog?: SessionLog;
  /** The Sessions repository (default: one on `dataSource`). */
  sessions?: SessionRepository;
  /** The model endpoint, or why there is none usable (every turn then ends at once with that reason). */
  model: ModelClient | { unavailable: string } | null;
  /** Remote MCP (tool listing and journaled calls); absent: MCP servers are not offered to the model. */
  mcp?: McpRuntime;
  /** Prompt size (tokens) at which completed turns are summarized; unset: 80% of the profile's window. */
  compactAtTokens?: number;
  /** Operator model profiles (`MANGO_MODEL_PROFILES`) over the built-in ones. */
  profiles?: ModelProfileOverrides;
  /** Operator list prices (`MANGO_MODEL_PRICES`) over the built-in ones. */
  prices?: PriceTable;
  /** Turn, model request, token and list-cost metrics (the orchestrator's registry). */
  metrics?: MangoMetrics;
  /** Bounds of the `auto` policy's judgement request (MANGO_AUTO_PERMISSION_TIMEOUT_MS). */
  autoJudge?: { timeoutMs?: number };
  /**
   * The wait for a step's tool results inside the step's activity (ADR 0019): `ms` 0 or absent turns it
   * off (every step returns to the workflow); `wakes` are the relay's notices by Session.
   */
  toolResultWait?: { ms: number; wakes: SessionWakes; recheckMs?: number };
  /** How often a running grader appends `span.outcome_evaluation_ongoing` (default 10 s). */
  outcomeOngoingMs?: number;
}): SessionActivities {
  const log = deps.sessionLog ?? new SessionLog(deps.dataSource);
  const sessions = deps.sessions ?? new SessionRepository(deps.dataSource);
  const modelStep = createModelStep({ ...deps, log, sessions });
  return {
    ...createTurnActivities(log, deps.metrics),
    ...createOutcomeGrader({ ...deps, ongoingMs: deps.outcomeOngoingMs }, log),
    ...createResumeActivities(log),

    async runModelStep(ref: ModelStepRef): Promise<StepsOutcome> {
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
  };
}
