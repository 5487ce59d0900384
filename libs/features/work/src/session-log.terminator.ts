import { Inject, Injectable } from '@nestjs/common';
import { SessionLog } from '@mango/persistence';
import type { EntityManager } from 'typeorm';
import type { SessionTerminator } from './session-terminator.port';

/**
 * The SessionTerminator over the Session aggregate's log (`SessionLog.terminate`, ADR 0005). The Fail
 * route's contract (docs/api-guide.md, Environment Work "Fail"): `session.error`
 * (`session_input_failed_error`, terminal) then `session.status_terminated`, once; a deleted or already
 * terminated Session is left alone. The status follows from the events (the Session status machine).
 */
@Injectable()
export class SessionLogTerminator implements SessionTerminator {
  constructor(@Inject(SessionLog) private readonly log: SessionLog) {}

  terminate(tx: EntityManager, sessionId: string, message: string, now: Date): Promise<void> {
    return this.log.terminate(tx, sessionId, message, now);
  }
}
