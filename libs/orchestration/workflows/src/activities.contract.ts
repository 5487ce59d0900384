import type { SessionResumeState } from '@mango/domain-sessions';

/** Activity signatures the workflows call. Implementations live in @mango/activities. */
export interface ProbeActivities {
  /** PostgreSQL's now(), as RFC 3339. */
  databaseTime(): Promise<string>;
}

export interface TurnRef {
  sessionId: string;
  /** A delegate or Advisor Thread's turn (ADR 0017); absent for the primary Thread's. */
  threadId?: string;
  /** The workflow's turn counter: part of every idempotency key the turn's events carry. */
  turn: number;
}

export interface ModelStepRef extends TurnRef {
  /** Model calls within the turn (one per tool round trip). */
  step: number;
  /**
   * Steps this activity may run (ADR 0019): after a step whose tool calls are answered within the
   * orchestrator's wait window it runs the next one itself (`step + 1`, …), at most this many in all.
   * Absent (workflows recorded before): one step.
   */
  maxSteps?: number;
}

/**
 * The last step's outcome and, when the workflow passed `maxSteps`, how many steps the activity ran
 * (at least 1): the workflow's next step is `step + steps`.
 */
export type StepsOutcome = StepOutcome & { steps?: number };

export type StepOutcome =
  | { stopReason: 'end_turn' }
  /**
   * Tool calls to run: sandbox calls (`toolUseIds`) wait for a user.tool_result each; MCP calls
   * (`mcpToolUseIds`) are made by the orchestrator (`runMcpCall`) before that wait.
   */
  | {
      stopReason: 'tool_use';
      toolUseIds: string[];
      mcpToolUseIds?: string[];
      /**
       * Which of `toolUseIds` already had their user.tool_result when the step read the log under the
       * Session's row lock (none for calls it just recorded). Any other result commits later and reaches
       * the running workflow as a signal, so the workflow waits on signals alone. Absent (a result
       * recorded before this field, or a step that could not tell): the workflow looks at the log once.
       */
      answered?: string[];
    }
  /** Calls that need a confirmation (always_ask): the turn ends idle with these event ids. */
  | { stopReason: 'requires_action'; eventIds: string[] }
  /** The pre-request budget gate closed: the turn pauses until the budget is raised or removed. */
  | { stopReason: 'budget_reached' };

/** Attempts of one model request (the activity retry policy); the activity reports each failure. */
export const MODEL_REQUEST_ATTEMPTS = 5;

/** The ApplicationFailure type of a model request that will not be retried (its session.error is recorded). */
export const MODEL_REQUEST_EXHAUSTED = 'ModelRequestExhausted';

export interface SessionActivities extends OutcomeActivities {
  /**
   * The workflow state the Session's log implies (`resumeStateFromLog`, libs/domain/sessions): read once
   * by a workflow that starts without state, so a lost or terminated workflow resumes a mid-turn Session.
   */
  resumeState(ref: { sessionId: string; threadId?: string }): Promise<SessionResumeState>;
  /**
   * Appends `session.status_running` (once per turn; a delegate's `session.thread_status_running`) and
   * sets the projection to running.
   */
  beginTurn(ref: TurnRef): Promise<void>;
  /**
   * Builds the transcript from the event log, calls the model, appends its events once; with `maxSteps`,
   * waits a bounded window for the step's tool results and runs the following steps too (ADR 0019).
   */
  runModelStep(ref: ModelStepRef): Promise<StepsOutcome>;
  /**
   * Makes one allowed (or confirmed) MCP call under the journal and appends its single
   * agent.mcp_tool_result; a call whose earlier attempt may have reached the server gets an
   * outcome-unknown error result instead of being sent again. Returns nothing (no secret or result
   * reaches the workflow history).
   */
  runMcpCall(ref: { sessionId: string; mcpToolUseId: string; threadId?: string }): Promise<void>;
  /** Whether every listed tool call has its user.tool_result. */
  toolResultsReady(ref: { sessionId: string; toolUseIds: string[] }): Promise<boolean>;
  /**
   * Appends `session.status_idle` with the stop reason (once per turn) and sets the projection to idle;
   * for `budget_reached` a `session.usage` snapshot first; for a failure that recorded no `session.error`
   * (`unrecordedError`), an `unknown_error` first.
   */
  endTurn(
    ref: TurnRef & {
      stopReason: string;
      eventIds?: string[];
      unrecordedError?: string;
      /** A delegate's turn an interrupt stopped: it reports nothing to the coordinator. */
      interrupted?: boolean;
    },
  ): Promise<void | { finished?: boolean }>;
}

/**
 * What one grading came to (`gradeOutcome`): no outcome to grade, the budget gate closed before the
 * grader request, or the evaluation's result (libs/domain/sessions outcome.ts).
 */
export type GradeOutcome =
  'none' | 'budget_reached' | 'satisfied' | 'needs_revision' | 'failed' | 'max_iterations_reached';

/** The outcome loop's activities (libs/orchestration/activities outcome-grader.activity.ts). */
export interface OutcomeActivities {
  /**
   * Grades the Session's active outcome once (`round`: gradings so far in this turn): appends
   * `span.outcome_evaluation_start`, `_ongoing` heartbeats while the grader model request runs, and
   * `span.outcome_evaluation_end {result}`; the grader's usage counts against the Session budget.
   * Idempotent per turn and round (a retry returns the recorded result).
   */
  gradeOutcome(ref: TurnRef & { round: number }): Promise<GradeOutcome>;
  /** An interrupt ended the turn: the active outcome, if any, ends `interrupted` (once per turn). */
  interruptOutcome(ref: TurnRef): Promise<void>;
}

/** What one webhook delivery attempt came to. */
export type WebhookAttemptOutcome =
  /** 2xx: the delivery is done. */
  | 'delivered'
  /** Anything else (status, timeout, connection error): retried while attempts remain. */
  | 'failed'
  /** Not worth retrying: the endpoint is deleted or disabled, or its address is refused. */
  | 'abandoned';

export interface WebhookActivities {
  /**
   * One attempt of a delivery: signs the stored event with the endpoint's live secrets and a fresh
   * timestamp, POSTs it, records the attempt (idempotently: a retried activity returns the recorded
   * outcome) and the delivery's state (`final`: no attempt follows, so a failure is terminal).
   */
  deliverWebhookAttempt(ref: {
    deliveryId: string;
    attempt: number;
    final: boolean;
  }): Promise<WebhookAttemptOutcome>;
}

export interface DeploymentActivities {
  /**
   * Records one scheduled run of a Deployment (idempotent per scheduled time): a Session and its run, or a
   * run with an error (auto-pausing the Deployment for an archived or missing template). Null when the
   * Deployment is paused, archived or gone (nothing is recorded).
   */
  runScheduledDeployment(ref: { deploymentId: string; scheduledAt: string }): Promise<string | null>;
}
