import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { sessionWorkflow } from '@mango/workflows';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { MangoMetrics } from '@mango/platform-metrics';
import { SessionRepository, SessionThreadRepository } from '@mango/persistence';
import { threadWorkflowId } from '@mango/domain-sessions';
import { OrchestratorEnv } from './orchestrator.env';
import { LOGGER, ORCHESTRATOR_ENV, TEMPORAL } from './temporal-worker.service';
import type { TemporalConnector } from '@mango/platform-temporal';

/** Sessions looked at per pass (the oldest-updated first); the rest wait for the next pass. */
const BATCH = 200;
/**
 * A Session updated this recently is left alone: the outbox relay is likely signal-with-starting its
 * workflow right now (the first message of a Session is `running` before its workflow exists).
 */
const GRACE_SECONDS = 5;

/**
 * The Session sweeper (docs/adr/0016-session-workflow-rebuilt-from-the-log.md): every
 * `MANGO_SESSION_SWEEP_SECONDS` it finds Sessions whose status says a turn is under way (`running`,
 * `rescheduling`) but whose workflow is not running in Temporal (not found: Temporal lost its state;
 * terminated, failed, timed out or completed) and starts it again. The workflow rebuilds its state from
 * the Session log and continues the open turn, so nothing but the user's patience is lost. Each restart
 * holds the Session's row lock (FOR UPDATE SKIP LOCKED): two orchestrators never restart one Session at
 * once, and a Session being appended to right now is skipped (it is alive). Starting is idempotent
 * (`USE_EXISTING`): a workflow that came back in between is left as it is.
 */
@Injectable()
export class SessionSweeperService implements OnApplicationBootstrap, OnApplicationShutdown {
  private connection?: Connection;
  private client?: Client;
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  private stopped = false;
  private failing = false;
  private readonly restarts: Counter<'reason'>;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(TEMPORAL) private readonly temporal: TemporalConnector,
    @Inject(SessionRepository) private readonly sessions: SessionRepository,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
    @Inject(SessionThreadRepository) private readonly threads: SessionThreadRepository,
  ) {
    this.restarts = new Counter({
      name: 'mango_session_sweeper_restarts_total',
      help: 'Session workflows the sweeper started again for a running/rescheduling Session, by what it found (not_found, or the closed status, e.g. terminated).',
      labelNames: ['reason'] as const,
      registers: [metrics.registry],
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const seconds = this.env.MANGO_SESSION_SWEEP_SECONDS;
    if (seconds === 0) return;
    this.connection = await this.temporal.connectClient();
    this.client = new Client({ connection: this.connection, namespace: this.temporal.namespace });
    this.log.info({ every_seconds: seconds }, 'session sweeper running');
    this.metrics.backgroundLoop('session_sweeper', 'running');
    const tick = () => {
      this.pass = this.sweepOnce()
        .then(() => {
          if (this.failing) {
            this.metrics.backgroundLoop('session_sweeper', 'recovered');
            this.log.info('session sweeper recovered');
          }
          this.failing = false;
        })
        .catch((err: unknown) => {
          // A PostgreSQL or Temporal restart fails passes until it is back: said once, then on recovery.
          if (!this.failing) {
            this.metrics.backgroundLoop('session_sweeper', 'failing');
            this.log.warn({ err: String(err) }, 'session sweep failed; retrying next pass');
          }
          this.failing = true;
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, seconds * 1000);
        });
    };
    tick();
  }

  /** One pass: the candidates, then each restart under its Session's row lock. Returns how many it restarted. */
  async sweepOnce(): Promise<number> {
    const candidates = await this.sessions.staleRunningIds(GRACE_SECONDS, BATCH);
    let restarted = 0;
    for (const id of candidates) {
      if (this.stopped) break;
      // Under the row lock (SKIP LOCKED): undefined when another orchestrator has it, an append holds
      // it, or it moved on.
      const done = await this.sessions.withRunningLock(id, async () => {
        // The primary Thread's workflow (id = session id), then each running delegate Thread's (ADR 0017).
        const workflows = [
          { workflowId: id, threadId: undefined as string | undefined },
          ...(await this.threads.runningChildren(id)).map((t) => ({
            workflowId: threadWorkflowId(id, t),
            threadId: t as string | undefined,
          })),
        ];
        let any = false;
        for (const w of workflows) {
          const found = await this.workflowStatus(w.workflowId);
          if (found === 'RUNNING') continue;
          await this.client!.workflow.start(sessionWorkflow, {
            workflowId: w.workflowId,
            taskQueue: this.env.MANGO_TASK_QUEUE,
            args: [
              {
                sessionId: id,
                ...(w.threadId ? { threadId: w.threadId } : {}),
                turnsPerRun: this.env.MANGO_SESSION_TURNS_PER_RUN,
              },
            ],
            workflowIdConflictPolicy: 'USE_EXISTING',
          });
          const reason = found.toLowerCase();
          this.restarts.inc({ reason });
          this.log.warn(
            { session_id: id, ...(w.threadId ? { session_thread_id: w.threadId } : {}), found: reason },
            'session sweeper restarted a workflow: the Session was running with no live workflow',
          );
          any = true;
        }
        return any;
      });
      if (done) restarted += 1;
    }
    return restarted;
  }

  /** The Session workflow's status in Temporal (`RUNNING`, a closed status), or `NOT_FOUND`. */
  private async workflowStatus(id: string): Promise<string> {
    try {
      return (await this.client!.workflow.getHandle(id).describe()).status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw err;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
    await this.connection?.close();
  }
}
