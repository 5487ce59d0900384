import { EventEmitter } from 'node:events';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RateLimitedError } from '@mango/domain-kernel';
import { MangoMetrics } from '@mango/platform-metrics';
import { of } from 'rxjs';
import type { Principal } from '../principal';
import { FairUseInterceptor } from './fair-use.interceptor';
import { DEFAULT_FAIR_USE_SETTINGS, type FairUseSettings } from './fair-use.settings';
import { HoldsStream } from './holds-stream.decorator';

class Routes {
  plain(): string {
    return 'plain';
  }
  @HoldsStream()
  stream(): string {
    return 'stream';
  }
}

const wsKey = (workspaceId: string, keyId: string): Principal => ({ kind: 'workspace', workspaceId, keyId });
const workToken = (workspaceId: string, workId: string): Principal => ({
  kind: 'work',
  workspaceId,
  environmentId: 'env_1',
  workId,
  sessionId: 'sesn_1',
  tokenDigest: Buffer.alloc(32),
  live: true,
});

function harness(overrides: Partial<FairUseSettings>) {
  let t = 0;
  const metrics = new MangoMetrics('api');
  const settings = { ...DEFAULT_FAIR_USE_SETTINGS, ...overrides };
  const interceptor = new FairUseInterceptor(settings, new Reflector(), metrics, () => t);
  const next: CallHandler = { handle: () => of('handled') };
  const responses: EventEmitter[] = [];
  const call = (principal: Principal | undefined, route: 'plain' | 'stream' = 'plain') => {
    const res = new EventEmitter();
    responses.push(res);
    const ctx = {
      getType: () => 'http',
      getHandler: () => Routes.prototype[route],
      getClass: () => Routes,
      switchToHttp: () => ({ getRequest: () => ({ principal }), getResponse: () => res }),
    } as unknown as ExecutionContext;
    try {
      interceptor.intercept(ctx, next);
      return 'ok';
    } catch (e) {
      if (e instanceof RateLimitedError) return e;
      throw e;
    }
  };
  const refusals = async () =>
    (await metrics.fairUseRefusals.get()).values.map((v) => [v.labels.limit, v.labels.scope, v.value]);
  return { call, refusals, responses, advance: (ms: number) => (t += ms) };
}

const tiny = { ratePerSecond: 1, burst: 2 };

describe('FairUseInterceptor', () => {
  it('refuses a credential over its rate with 429 details and retry-after, and counts the refusal', async () => {
    const h = harness({ keyRequests: tiny });
    expect([h.call(wsKey('w1', 'k1')), h.call(wsKey('w1', 'k1'))]).toEqual(['ok', 'ok']);
    const refused = h.call(wsKey('w1', 'k1')) as RateLimitedError;
    expect(refused.retryAfterSeconds).toBe(1);
    expect(refused.details).toEqual({ limit: 'requests', scope: 'credential' });
    expect(refused.message).toMatch(/API key k1 is over its request rate/);
    expect(await h.refusals()).toEqual([['requests', 'credential', 1]]);
    h.advance(1000);
    expect(h.call(wsKey('w1', 'k1'))).toBe('ok');
  });

  it("one Workspace over its rate does not touch another Workspace's", () => {
    const h = harness({ workspaceRequests: { ratePerSecond: 1, burst: 3 } });
    const a = ['k1', 'k2', 'k3', 'k4'].map((k) => h.call(wsKey('wA', k)));
    expect(a.filter((r) => r === 'ok')).toHaveLength(3);
    expect((a[3] as RateLimitedError).details).toEqual({ limit: 'requests', scope: 'workspace' });
    expect([h.call(wsKey('wB', 'k5')), h.call(wsKey('wB', 'k5')), h.call(wsKey('wB', 'k6'))]).toEqual([
      'ok',
      'ok',
      'ok',
    ]);
  });

  it("a Work token has its own, smaller bucket per Work item: one sandbox's flood leaves the others and the keys served", () => {
    const h = harness({ workTokenRequests: tiny });
    const flood = Array.from({ length: 10 }, () => h.call(workToken('w1', 'work_a')));
    expect(flood.filter((r) => r === 'ok')).toHaveLength(2);
    expect((flood[2] as RateLimitedError).message).toMatch(/Work token of work_a/);
    expect(h.call(workToken('w1', 'work_b'))).toBe('ok');
    expect(h.call(wsKey('w1', 'k1'))).toBe('ok');
  });

  it('a stream route holds a slot until its response closes; the Workspace limit spans its keys', async () => {
    const h = harness({ workspaceStreams: 2, credentialStreams: 5 });
    expect([h.call(wsKey('wA', 'k1'), 'stream'), h.call(wsKey('wA', 'k2'), 'stream')]).toEqual(['ok', 'ok']);
    const refused = h.call(wsKey('wA', 'k3'), 'stream') as RateLimitedError;
    expect(refused.details).toEqual({ limit: 'streams', scope: 'workspace' });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // Plain requests are not streams; another Workspace has its own slots.
    expect(h.call(wsKey('wA', 'k3'))).toBe('ok');
    expect(h.call(wsKey('wB', 'k9'), 'stream')).toBe('ok');
    h.responses[0]!.emit('close');
    expect(h.call(wsKey('wA', 'k3'), 'stream')).toBe('ok');
    expect(await h.refusals()).toEqual([['streams', 'workspace', 1]]);
  });

  it('per credential streams: one key at its limit, another key of the same Workspace still opens one', () => {
    const h = harness({ workspaceStreams: 10, credentialStreams: 1 });
    expect(h.call(wsKey('wA', 'k1'), 'stream')).toBe('ok');
    expect((h.call(wsKey('wA', 'k1'), 'stream') as RateLimitedError).details).toEqual({
      limit: 'streams',
      scope: 'credential',
    });
    expect(h.call(wsKey('wA', 'k2'), 'stream')).toBe('ok');
  });

  it('off: nothing is counted or refused; public routes (no principal) are never counted', () => {
    const off = harness({ enabled: false, keyRequests: tiny, credentialStreams: 1 });
    expect(Array.from({ length: 5 }, () => off.call(wsKey('w', 'k'), 'stream'))).toEqual(Array(5).fill('ok'));
    const on = harness({ keyRequests: tiny, workspaceRequests: tiny });
    expect(Array.from({ length: 5 }, () => on.call(undefined))).toEqual(Array(5).fill('ok'));
  });
});
