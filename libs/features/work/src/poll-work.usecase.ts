import { Inject, Injectable } from '@nestjs/common';
import { unauthenticated } from '@mango/domain-kernel';
import { claim } from '@mango/domain-work-lease';
import { digestCredential, generateCredential, Principal } from '@mango/feature-auth';
import { claimOne, SessionLog, toLease, WorkItemRepository } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { tracer, tracingEnabled } from '@mango/platform-tracing';
import { DataSource, EntityManager } from 'typeorm';
import { nextPollStep, ReclaimKind, reclaimKindOf } from './poll-work.decision';
import { parsePollQuery } from './work-input';
import { WorkNotifier } from './work-notifier.service';
import { environmentPrincipal } from './work-principals';
import { encodeWorkSecret } from './work-secret';
import { WORK_SETTINGS, WorkSettings } from './work-settings';
import { renderWork, WorkView } from './work.view';

/**
 * Poll (Environment key): claims the oldest claimable item (or reclaims a stale one) and returns it with
 * a fresh secret; `{}` when there is none after `block_ms`. Waiting is woken by NOTIFY, or by the moment
 * the next item becomes claimable — never by a fixed sleep (`nextPollStep`). The key is re-checked, held
 * FOR SHARE, on every attempt, so a committed revocation stops further claims.
 */
interface Attempt {
  work: WorkView | null;
  nextWakeMs?: number;
  reclaim?: ReclaimKind;
  workType?: string;
}

@Injectable()
export class PollWorkUseCase {
  private readonly items = new WorkItemRepository();

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly notifier: WorkNotifier,
    @Inject(WORK_SETTINGS) private readonly settings: WorkSettings,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
    @Inject(SessionLog) private readonly log: SessionLog,
  ) {}

  /**
   * The trace a claimed Session item continues, only while tracing is configured: the turn's
   * (`SessionLog.turnTraceparent`, the request that started the turn the item serves). It rides in the
   * Work secret to the worker (its `mango.environment.work` span); a healthcheck has none.
   */
  private workTraceparent(
    em: EntityManager,
    row: { kind: string; sessionId: string | null },
  ): Promise<string | undefined> {
    if (!tracingEnabled() || row.kind !== 'session' || !row.sessionId) return Promise.resolve(undefined);
    return this.log.turnTraceparent(em, row.sessionId);
  }

  async execute(
    p: Principal,
    environmentId: string,
    query: Record<string, unknown>,
    workerHeader: unknown,
  ): Promise<WorkView | Record<string, never>> {
    const input = parsePollQuery(query, workerHeader);
    const env = environmentPrincipal(p, environmentId);
    const deadline = Date.now() + input.blockMs;
    for (;;) {
      const subscription = input.blockMs > 0 ? this.notifier.subscribe(environmentId) : undefined;
      try {
        const attempt = await this.attempt(env.keyId, environmentId, input);
        const step = nextPollStep(
          { claimed: attempt.work !== null, nextWakeMs: attempt.nextWakeMs },
          deadline - Date.now(),
          subscription !== undefined,
        );
        if (step.kind === 'return_work') {
          this.recordClaim(environmentId, attempt.work!.id, attempt.workType!, attempt.reclaim!);
          return attempt.work!;
        }
        if (step.kind === 'return_empty') return {};
        await subscription!.wait(step.ms);
      } finally {
        subscription?.close();
      }
    }
  }

  /**
   * One claim attempt. The common case is one statement (`claimOne`: key, poller, overdue check and the
   * claim in one round trip); only when overdue items must be reconciled first does it take the
   * transactional path, where the state machine reconciles them and `claim()` decides on the locked row.
   */
  private async attempt(
    keyId: string,
    environmentId: string,
    input: ReturnType<typeof parsePollQuery>,
  ): Promise<Attempt> {
    const token = generateCredential('workToken');
    const secret = (traceparent?: string) =>
      encodeWorkSecret({
        sessions_token: token,
        api_base_url: this.settings.publicBaseUrl,
        ...(traceparent ? { traceparent } : {}),
      });
    const out = await claimOne(this.dataSource, {
      keyId,
      environmentId,
      workerId: input.workerId,
      reclaimOlderThanMs: input.reclaimOlderThanMs,
      tokenDigest: digestCredential(token),
    });
    switch (out.kind) {
      case 'revoked':
        throw unauthenticated('the Environment key was revoked');
      case 'claimed':
        return {
          work: renderWork(out.row, secret(await this.workTraceparent(this.dataSource.manager, out.row))),
          nextWakeMs: 0,
          reclaim: reclaimKindOf(out.previous),
          workType: out.row.kind,
        };
      case 'none':
        return {
          work: null,
          // Only a long poll needs to know when to look again.
          nextWakeMs:
            input.blockMs > 0
              ? await this.items.nextClaimableInMs(
                  this.dataSource,
                  environmentId,
                  out.now,
                  input.reclaimOlderThanMs,
                )
              : undefined,
        };
      case 'overdue':
        return this.attemptReconciling(keyId, environmentId, input, token, secret);
    }
  }

  /** The transactional path: reconcile the overdue items, then claim on a row locked FOR UPDATE SKIP LOCKED. */
  private attemptReconciling(
    keyId: string,
    environmentId: string,
    input: ReturnType<typeof parsePollQuery>,
    token: string,
    secret: (traceparent?: string) => string,
  ): Promise<Attempt> {
    return this.dataSource.transaction(async (tx) => {
      // One statement: the key held FOR SHARE (PostgreSQL's clock), the poller's last-seen time and
      // the overdue items to reconcile.
      const { now, overdue } = await this.items.holdKeyForPoll(tx, keyId, environmentId, input.workerId);
      await this.items.reconcileEnvironment(tx, environmentId, now, overdue);
      const row = await this.items.claimable(tx, environmentId, now, input.reclaimOlderThanMs);
      if (!row) {
        return {
          work: null,
          nextWakeMs: await this.items.nextClaimableInMs(tx, environmentId, now, input.reclaimOlderThanMs),
        };
      }
      const reclaim = reclaimKindOf(row);
      const { next } = claim(toLease(row), now, input.reclaimOlderThanMs);
      await this.items.saveClaim(tx, row, next, digestCredential(token), input.workerId);
      return {
        work: renderWork(row, secret(await this.workTraceparent(tx, row))),
        nextWakeMs: 0,
        reclaim,
        workType: row.kind,
      };
    });
  }

  /** Counted once the claim committed; a span under the Poll request's (no secret or token attributes). */
  private recordClaim(environmentId: string, workId: string, workType: string, reclaim: string): void {
    if (tracingEnabled())
      tracer()
        .startSpan('mango.environment.work.claim', {
          attributes: {
            'mango.environment.id': environmentId,
            'mango.work.id': workId,
            'mango.work.type': workType,
            'mango.work.reclaim': reclaim,
          },
        })
        .end();
    const labels = { environment_id: environmentId, work_type: workType };
    this.metrics.workClaims.inc({ ...labels, reclaim });
    if (reclaim === 'lease_expired') this.metrics.workLeaseExpiries.inc(labels);
  }
}
