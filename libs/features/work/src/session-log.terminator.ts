import { Injectable } from '@nestjs/common';
import { appendEvents, SessionEntity } from '@mango/persistence';
import type { EntityManager } from 'typeorm';
import type { SessionTerminator } from './session-terminator.port';

/**
 * The SessionTerminator over today's Session log (`appendEvents` in libs/persistence). The Fail route's
 * contract (docs/api-guide.md, Environment Work "Fail"): `session.error` (`session_input_failed_error`,
 * terminal) then `session.status_terminated`, once; a deleted or already terminated Session is left alone.
 */
@Injectable()
export class SessionLogTerminator implements SessionTerminator {
  async terminate(tx: EntityManager, sessionId: string, message: string, now: Date): Promise<void> {
    const session = await tx.findOne(SessionEntity, {
      where: { id: sessionId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!session || session.deletedAt || session.status === 'terminated') return;
    session.status = 'terminated';
    await tx.update(SessionEntity, { id: session.id }, { status: 'terminated' });
    await appendEvents(
      tx,
      session,
      [
        {
          type: 'session.error',
          body: {
            error: { type: 'session_input_failed_error', message, retry_status: { type: 'terminal' } },
          },
          processed: true,
          runnable: false,
        },
        { type: 'session.status_terminated', body: {}, processed: true, runnable: false },
      ],
      now,
    );
  }
}
