/** Operator model prices (`MANGO_MODEL_PRICES`), provided by the app; absent means the built-in list only. */
export const MODEL_PRICES = Symbol.for('mango.ModelPrices');

/**
 * Limits that protect one API process under load (operator configuration, documented defaults). Beyond
 * them a request is refused whole (413 or 429) and changes nothing.
 */
export interface SessionServiceLimits {
  /** Events one request may carry (POST …/events and `initial_events`); more is 413. Default 100. */
  eventsPerRequest: number;
  /** Event streams (SSE) this process serves at once; one more is 429 until one closes. Default 10,000. */
  streams: number;
  /**
   * Sessions of one Workspace with a turn under way (`running`/`rescheduling`, counted in PostgreSQL across
   * every API process); the event that would start one more turn is 429 (docs/api-guide.md "Fair use").
   * Absent or null: not limited.
   */
  runningSessionsPerWorkspace?: number | null;
}
export const DEFAULT_SESSION_SERVICE_LIMITS: SessionServiceLimits = {
  eventsPerRequest: 100,
  streams: 10_000,
};
export const SESSION_SERVICE_LIMITS = Symbol.for('mango.SessionServiceLimits');
