/** Activity signatures the workflows call. Implementations live in @mango/activities. */
export interface ProbeActivities {
  /** PostgreSQL's now(), as RFC 3339. */
  databaseTime(): Promise<string>;
}

export interface TurnRef {
  sessionId: string;
  /** The workflow's turn counter: part of every idempotency key the turn's events carry. */
  turn: number;
}

export interface SessionActivities {
  /** Appends `session.status_running` (once per turn) and sets the projection to running. */
  beginTurn(ref: TurnRef): Promise<void>;
  /** Builds the transcript from the event log, calls the model, appends its events once. */
  runModelTurn(ref: TurnRef): Promise<{ stopReason: 'end_turn' | 'requires_action' | 'retries_exhausted' }>;
  /** Appends `session.status_idle` with the stop reason (once per turn) and sets the projection to idle. */
  endTurn(ref: TurnRef & { stopReason: string }): Promise<void>;
}
