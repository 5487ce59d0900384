import type { EntityManager } from 'typeorm';

/**
 * How the Work feature ends a Session without writing the Session's tables itself: a permanent input
 * failure reported by the worker (Fail) terminates its Session in the Fail transaction. Bound in
 * `WorkModule` to `SessionLogTerminator`; the Session aggregate owns what that means.
 */
export interface SessionTerminator {
  /** In `tx`: `session.error` (`session_input_failed_error`, terminal) and status `terminated`. */
  terminate(tx: EntityManager, sessionId: string, message: string, now: Date): Promise<void>;
}

export const SESSION_TERMINATOR = Symbol('SESSION_TERMINATOR');
