import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { sessionInputSignal, sessionWorkflow } from '@mango/workflows';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { MangoMetrics } from '@mango/platform-metrics';
import {
  context,
  contextFrom,
  SpanKind,
  temporalClientInterceptors,
  trace,
  tracer,
} from '@mango/platform-tracing';
import {
  OUTBOX_CHANNEL,
  OutboxRepository,
  type OutboxRow,
  primaryThreadId,
  SessionThreadRepository,
  SessionWakes,
  WakeLoop,
} from '@mango/persistence';
import type { EntityManager } from 'typeorm';
import {
  THREAD_ARCHIVE_REQUESTED,
  threadWorkflowId,
  wakesWorkflow,
  workflowWake,
} from '@mango/domain-sessions';
import { OrchestratorEnv } from './orchestrator.env';
import { LOGGER, ORCHESTRATOR_ENV, TEMPORAL } from './temporal-worker.service';
import type { TemporalConnector } from '@mango/platform-temporal';

const BATCH = 100;

/** One signal to send: to the Session workflow (`threadId` null) or a Thread's; `start` may start it. */
type Delivery = OutboxRow & { threadId: string | null; start: boolean };
const SWEEP_MS = 1000;
/** Signal-with-start calls in flight at once during one relay pass. */
const SIGNAL_LANES = 16;
/** Dispatched rows are pruned at most this often, at most this many batches per pass (ADR 0007). */
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCHES_PER_PASS = 10;

/**
 * The outbox relay: the outbox holds only kinds that wake the workflow (ADR 0007). It claims undispatched rows with FOR UPDATE SKIP LOCKED (several orchestrators may run),
 * signal-with-starts the Session workflow (workflow id = session id, signal carries the event sequence)
 * and marks the rows dispatched in the same transaction. At least once: a crash between the signal and
 * the commit re-sends a sequence the workflow already consumed, which it ignores. Woken by NOTIFY, with a
 * slow sweep as the safety net.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnApplicationShutdown {
  private loop?: WakeLoop;
  private connection?: NativeConnection;
  private client?: Client;
  private prunedAt = 0;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(OutboxRepository) private readonly outbox: OutboxRepository,
    @Inject(SessionThreadRepository) private readonly threads: SessionThreadRepository,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
    @Inject(SessionWakes) private readonly wakes: SessionWakes,
    @Inject(TEMPORAL) private readonly temporal: TemporalConnector,
  ) {
    metrics.gauge(
      'mango_outbox_pending',
      'Outbox rows not yet dispatched (cluster-wide; aggregate replicas with max).',
      [],
      async () => [{ value: Number((await this.outbox.backlog()).n) }],
    );
    metrics.gauge(
      'mango_outbox_lag_seconds',
      'Age of the oldest undispatched outbox row; 0 when the outbox is drained (cluster-wide).',
      [],
      async () => [{ value: Math.max(0, Number((await this.outbox.backlog()).age ?? 0)) }],
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    // The worker's native (Rust core) gRPC client: a signal costs a fraction of @grpc/grpc-js's CPU, and
    // the relay signals once per tool result.
    this.connection = await this.temporal.connectNative(NativeConnection);
    // With tracing, Temporal's client interceptor carries the dispatch span's context in the headers of
    // the signal-with-start, where the workflow interceptors continue it.
    this.client = new Client({
      connection: this.connection,
      namespace: this.temporal.namespace,
      interceptors: temporalClientInterceptors(),
    });
    // NOTIFY only says "look now"; after a lost connection the listener reconnects and the sweep and a
    // fresh pass cover anything missed.
    this.loop = new WakeLoop({
      url: this.env.MANGO_DATABASE_URL,
      // Woken only by appends that wrote outbox rows (ADR 0007), not by every event or preview.
      channel: OUTBOX_CHANNEL,
      applicationName: 'mango-outbox-relay',
      sweepMs: SWEEP_MS,
      pass: async () => {
        await this.drain();
        await this.prune();
      },
      onPassError: (err) => {
        this.metrics.backgroundLoop('outbox_relay', 'failing');
        this.log.error({ err: String(err) }, 'outbox relay pass failed; retrying on the next wake-up');
      },
      onRecovered: () => {
        this.metrics.backgroundLoop('outbox_relay', 'recovered');
        this.log.info('outbox relay recovered: passes succeed again');
      },
      // The same notices wake this process's model steps that wait for their tool results (ADR 0019):
      // the payload is the Session id. No extra connection per waiting step.
      onNotice: (sessionId) => this.wakes.wake(sessionId),
      onLost: () => this.log.warn('outbox listener lost; reconnecting (the sweep keeps relaying)'),
      onReconnected: () => {
        this.log.info('outbox listener reconnected');
        this.wakes.wakeAll();
      },
    });
    this.metrics.backgroundLoop('outbox_relay', 'running');
    await this.loop.start();
  }

  private async drain(): Promise<void> {
    for (;;) {
      // The signal carries what the workflow needs to decide without a database round trip: the
      // sequence, the kind and, for a tool result, the call it answers.
      const relayed = await this.outbox.dispatchBatch(BATCH, async (tx, rows) => {
        // One Session's signals go in sequence order; different Sessions' go concurrently (a batch of
        // a hundred Sessions is a few round trips, not a hundred, while the rows stay locked).
        const bySession = new Map<string, Delivery[]>();
        for (const row of rows) {
          // Kinds that do not move the workflow are marked dispatched without a signal.
          if (!wakesWorkflow(row.kind)) continue;
          const list = bySession.get(row.session_id) ?? [];
          list.push(...(await this.deliveries(tx, row)));
          bySession.set(row.session_id, list);
        }
        const queue = [...bySession.values()];
        const lane = async () => {
          for (let list = queue.shift(); list; list = queue.shift())
            for (const row of list) {
              // The hand-off to Temporal, in the trace of the request that wrote the event.
              const parent = contextFrom(row.traceparent);
              const span = tracer().startSpan(
                'mango.outbox.dispatch',
                {
                  kind: SpanKind.PRODUCER,
                  attributes: { 'mango.session.id': row.session_id, 'mango.event.kind': row.kind },
                },
                parent,
              );
              const signal = { seq: Number(row.event_seq), kind: row.kind, toolUseId: row.tool_use_id };
              await context
                .with(trace.setSpan(parent, span), async () => {
                  if (!row.threadId)
                    return this.client!.workflow.signalWithStart(sessionWorkflow, {
                      workflowId: row.session_id,
                      taskQueue: this.env.MANGO_TASK_QUEUE,
                      args: [
                        { sessionId: row.session_id, turnsPerRun: this.env.MANGO_SESSION_TURNS_PER_RUN },
                      ],
                      signal: sessionInputSignal,
                      signalArgs: [signal],
                    });
                  const workflowId = threadWorkflowId(row.session_id, row.threadId);
                  // A Session-wide fan-out or an archive only tells a running Thread workflow; input starts one.
                  if (!row.start)
                    return this.client!.workflow.getHandle(workflowId)
                      .signal(sessionInputSignal, signal)
                      .catch((err: unknown) => {
                        if (!(err instanceof WorkflowNotFoundError)) throw err;
                      });
                  return this.client!.workflow.signalWithStart(sessionWorkflow, {
                    workflowId,
                    taskQueue: this.env.MANGO_TASK_QUEUE,
                    args: [
                      {
                        sessionId: row.session_id,
                        threadId: row.threadId,
                        turnsPerRun: this.env.MANGO_SESSION_TURNS_PER_RUN,
                      },
                    ],
                    signal: sessionInputSignal,
                    signalArgs: [signal],
                  });
                })
                .finally(() => span.end());
            }
        };
        await Promise.all(Array.from({ length: Math.min(SIGNAL_LANES, queue.length) }, lane));
      });
      // Observed once the dispatch committed (a rolled-back pass is relayed, and counted, again).
      for (const r of relayed) this.metrics.outboxDispatchLag.observe(Math.max(0, Number(r.waited)));
      if (relayed.length < BATCH) return;
    }
  }

  /**
   * Where one outbox row's signal goes (ADR 0017): a primary row to the Session workflow — and a
   * Session-wide interrupt, budget change or Fail also to every live delegate Thread's workflow; a
   * Thread's row to that Thread's workflow. An archive request is finished here, in the dispatch
   * transaction (the Thread was idle when it was asked), and its workflow is told to stop.
   */
  private async deliveries(tx: EntityManager, row: OutboxRow): Promise<Delivery[]> {
    const thread = row.session_thread_id === primaryThreadId(row.session_id) ? null : row.session_thread_id;
    if (row.kind === THREAD_ARCHIVE_REQUESTED) {
      if (!thread) return [];
      await this.threads.finishArchive(tx, thread, new Date());
      return [{ ...row, threadId: thread, start: false }];
    }
    if (thread) return [{ ...row, threadId: thread, start: true }];
    const wake = workflowWake(row.kind);
    const fanOut = wake === 'interrupt' || wake === 'budget' || wake === 'terminate';
    if (!fanOut) return [{ ...row, threadId: null, start: true }];
    const children = await this.threads.liveChildren(tx, row.session_id, {
      terminated: wake === 'terminate',
    });
    return [
      { ...row, threadId: null, start: true },
      ...children.map((c) => ({ ...row, threadId: c.id, start: false })),
    ];
  }

  /** Deletes dispatched rows past their retention, in bounded batches, at most once a minute. */
  private async prune(): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    await this.outbox.prune(PRUNE_BATCHES_PER_PASS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
    if (this.connection) this.temporal.release(this.connection);
    await this.connection?.close();
  }
}
