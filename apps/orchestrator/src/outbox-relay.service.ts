import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { sessionInputSignal, sessionWorkflow } from '@mango/workflows';
import { Client, Connection } from '@temporalio/client';
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
import { OUTBOX_CHANNEL, OUTBOX_PRUNE_BATCH, pruneDispatchedOutbox, WakeLoop } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { wakesWorkflow } from '@mango/domain-sessions';
import { OrchestratorEnv } from './orchestrator.env';
import { LOGGER, ORCHESTRATOR_ENV } from './temporal-worker.service';

const BATCH = 100;
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
  private connection?: Connection;
  private client?: Client;
  private prunedAt = 0;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
  ) {
    metrics.gauge(
      'mango_outbox_pending',
      'Outbox rows not yet dispatched (cluster-wide; aggregate replicas with max).',
      [],
      async () => [{ value: Number((await this.backlog()).n) }],
    );
    metrics.gauge(
      'mango_outbox_lag_seconds',
      'Age of the oldest undispatched outbox row; 0 when the outbox is drained (cluster-wide).',
      [],
      async () => [{ value: Math.max(0, Number((await this.backlog()).age ?? 0)) }],
    );
  }

  private async backlog(): Promise<{ n: number; age: number | null }> {
    const [row] = await this.dataSource.query(
      `SELECT count(*)::int AS n, EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 AS age
         FROM outbox WHERE dispatched_at IS NULL`,
    );
    return row;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.connection = await Connection.connect({ address: this.env.MANGO_TEMPORAL_ADDRESS });
    // With tracing, Temporal's client interceptor carries the dispatch span's context in the headers of
    // the signal-with-start, where the workflow interceptors continue it.
    this.client = new Client({
      connection: this.connection,
      namespace: this.env.MANGO_TEMPORAL_NAMESPACE,
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
      onPassError: (err) =>
        this.log.error({ err: String(err) }, 'outbox relay pass failed; retrying on the next wake-up'),
      onRecovered: () => this.log.info('outbox relay recovered: passes succeed again'),
      onLost: () => this.log.warn('outbox listener lost; reconnecting (the sweep keeps relaying)'),
      onReconnected: () => this.log.info('outbox listener reconnected'),
    });
    await this.loop.start();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const relayed = await this.dataSource.transaction(async (tx) => {
        // The signal carries what the workflow needs to decide without a database round trip: the
        // sequence, the kind and, for a tool result, the call it answers.
        const rows: Array<{
          id: string;
          session_id: string;
          event_seq: string;
          kind: string;
          tool_use_id: string | null;
          waited: number;
          traceparent: string | null;
        }> = await tx.query(
          `SELECT o.id, o.session_id, o.event_seq, o.kind, e.tool_use_id, e.body->>'_traceparent' AS traceparent,
                  EXTRACT(EPOCH FROM (now() - o.created_at))::float8 AS waited
             FROM outbox o LEFT JOIN session_events e ON e.session_id = o.session_id AND e.seq = o.event_seq
            WHERE o.dispatched_at IS NULL ORDER BY o.id LIMIT ${BATCH} FOR UPDATE OF o SKIP LOCKED`,
        );
        // One Session's signals go in sequence order; different Sessions' go concurrently (a batch of
        // a hundred Sessions is a few round trips, not a hundred, while the rows stay locked).
        const bySession = new Map<string, typeof rows>();
        for (const row of rows) {
          // Kinds that do not move the workflow are marked dispatched without a signal.
          if (!wakesWorkflow(row.kind)) continue;
          const list = bySession.get(row.session_id) ?? [];
          list.push(row);
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
              await context
                .with(trace.setSpan(parent, span), () =>
                  this.client!.workflow.signalWithStart(sessionWorkflow, {
                    workflowId: row.session_id,
                    taskQueue: this.env.MANGO_TASK_QUEUE,
                    args: [{ sessionId: row.session_id, turnsPerRun: this.env.MANGO_SESSION_TURNS_PER_RUN }],
                    signal: sessionInputSignal,
                    signalArgs: [{ seq: Number(row.event_seq), kind: row.kind, toolUseId: row.tool_use_id }],
                  }),
                )
                .finally(() => span.end());
            }
        };
        await Promise.all(Array.from({ length: Math.min(SIGNAL_LANES, queue.length) }, lane));
        if (rows.length)
          await tx.query('UPDATE outbox SET dispatched_at = now() WHERE id = ANY($1::bigint[])', [
            rows.map((r) => r.id),
          ]);
        return rows;
      });
      // Observed once the dispatch committed (a rolled-back pass is relayed, and counted, again).
      for (const r of relayed) this.metrics.outboxDispatchLag.observe(Math.max(0, Number(r.waited)));
      if (relayed.length < BATCH) return;
    }
  }

  /** Deletes dispatched rows past their retention, in bounded batches, at most once a minute. */
  private async prune(): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    for (let i = 0; i < PRUNE_BATCHES_PER_PASS; i++) {
      const deleted = await pruneDispatchedOutbox(this.dataSource);
      if (deleted < OUTBOX_PRUNE_BATCH) return;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
    await this.connection?.close();
  }
}
