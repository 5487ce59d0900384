import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { rateLimited } from '@mango/domain-kernel';
import { MangoMetrics } from '@mango/platform-metrics';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { ConcurrencySlots } from './concurrency-slots';
import { describeSubject, requestSubjects, streamSubjects } from './fair-use-subjects';
import type { FairUseSettings } from './fair-use.settings';
import { HOLDS_STREAM } from './holds-stream.decorator';
import { TokenBuckets } from './token-buckets';

export const FAIR_USE_SETTINGS = Symbol.for('mango.FairUseSettings');
/** The clock the request buckets read (ms, monotonic); tests may provide a fake one. */
export const FAIR_USE_CLOCK = Symbol.for('mango.FairUseClock');

/** `retry-after` for a refused stream: streams close at their client's pace, not on a schedule. */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Fair use per credential and per Workspace (docs/api-guide.md "Fair use"). An interceptor, so it runs
 * after every guard, the auth guard included: it reads the principal that guard set, and requests without
 * one (public routes) are not counted. Each request takes a token from its credential's and its
 * Workspace's buckets (both or neither); a route marked `HoldsStream` also holds a stream slot of each
 * until its connection closes. Beyond a limit: 429 `rate_limit_error` with `retry-after`, and the
 * handler does not run.
 */
@Injectable()
export class FairUseInterceptor implements NestInterceptor {
  private readonly buckets: TokenBuckets;
  private readonly streams = new ConcurrencySlots();
  private readonly holdsStream = new WeakMap<object, boolean>();

  constructor(
    @Inject(FAIR_USE_SETTINGS) private readonly settings: FairUseSettings,
    private readonly reflector: Reflector,
    @Optional() private readonly metrics?: MangoMetrics,
    @Optional() @Inject(FAIR_USE_CLOCK) clock?: () => number,
  ) {
    this.buckets = new TokenBuckets(clock);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.settings.enabled || context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const p = req.principal;
    if (!p) return next.handle();
    const taken = this.buckets.take(requestSubjects(p, this.settings));
    if (!taken.ok) {
      this.metrics?.fairUseRefusals.inc({ limit: 'requests', scope: taken.refusedBy });
      const rule =
        taken.refusedBy === 'workspace'
          ? this.settings.workspaceRequests
          : p.kind === 'work'
            ? this.settings.workTokenRequests
            : this.settings.keyRequests;
      throw rateLimited(
        `${describeSubject(p, taken.refusedBy)} is over its request rate on this server (${rule.ratePerSecond} per second, bursts of ${rule.burst}); retry after the time in retry-after`,
        taken.retryAfterMs / 1000,
        { limit: 'requests', scope: taken.refusedBy },
      );
    }
    if (this.isStream(context)) {
      const slot = this.streams.acquire(streamSubjects(p, this.settings));
      if (!slot.ok) {
        this.metrics?.fairUseRefusals.inc({ limit: 'streams', scope: slot.full });
        const limit =
          slot.full === 'workspace' ? this.settings.workspaceStreams : this.settings.credentialStreams;
        throw rateLimited(
          `${describeSubject(p, slot.full)} already holds ${limit} event streams on this server (MANGO_MAX_SSE_STREAMS_PER_${slot.full === 'workspace' ? 'WORKSPACE' : 'KEY'}); retry after one closes`,
          STREAM_RETRY_AFTER_S,
          { limit: 'streams', scope: slot.full },
        );
      }
      // Freed when the response is over, whichever way (stream ended, client gone, refused by the handler).
      const res = context.switchToHttp().getResponse<Response>();
      res.once('close', slot.release);
    }
    return next.handle();
  }

  /** Event streams held open on this process by `key` (a `streamSubjects` key): for tests and gauges. */
  openStreams(key: string): number {
    return this.streams.count(key);
  }

  private isStream(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let holds = this.holdsStream.get(handler);
    if (holds === undefined) {
      holds = this.reflector.getAllAndOverride<boolean>(HOLDS_STREAM, [handler, context.getClass()]) === true;
      this.holdsStream.set(handler, holds);
    }
    return holds;
  }
}
