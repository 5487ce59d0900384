import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, Max, Min } from 'class-validator';
import type { BucketRule } from './token-buckets';

/**
 * Fair use (docs/operator-guide.md "Fair use", docs/security-model-notes/fair-use.md): per-process limits
 * on the requests and event streams each credential and each Workspace may have, so that no Workspace
 * (and no sandbox) starves another. Request rates and streams are counted in this process's memory; the
 * running-Sessions limit is global (PostgreSQL) and lives with the Sessions feature.
 */
export interface FairUseSettings {
  /** `MANGO_FAIR_USE=off` turns every fair-use limit off. */
  enabled: boolean;
  /** All requests of one Workspace, whatever credential makes them. */
  workspaceRequests: BucketRule;
  /** Requests of one Workspace API key or Environment (supervisor) key. */
  keyRequests: BucketRule;
  /** Requests of one Work token (a sandbox's item runner). */
  workTokenRequests: BucketRule;
  /** Event streams one Workspace holds open on this process (null: not limited here, e.g. apps/files). */
  workspaceStreams: number | null;
  /** Event streams one credential holds open on this process. */
  credentialStreams: number | null;
}

export const DEFAULT_FAIR_USE_SETTINGS: FairUseSettings = {
  enabled: true,
  workspaceRequests: { ratePerSecond: 1000, burst: 2000 },
  keyRequests: { ratePerSecond: 500, burst: 1000 },
  workTokenRequests: { ratePerSecond: 50, burst: 200 },
  workspaceStreams: 2000,
  credentialStreams: 1000,
};

type EnvClass = new (...args: any[]) => object;

/**
 * The request-rate variables, mixed into an app's env DTO (apps/api and apps/files read the same names):
 * `class ApiEnv extends withRequestRateEnv(ObservabilityEnv)`.
 */
export function withRequestRateEnv<T extends EnvClass>(Base: T) {
  class RequestRateEnv extends Base {
    /** `off` turns every fair-use limit off (rates, streams, running Sessions). */
    @IsIn(['on', 'off'])
    MANGO_FAIR_USE: 'on' | 'off' = 'on';

    /** Requests per second one Workspace may make on this process, all its credentials together. */
    @Type(() => Number)
    @IsNumber({ allowNaN: false, allowInfinity: false })
    @Min(0.001)
    @Max(1_000_000)
    MANGO_RATE_LIMIT_WORKSPACE_RPS: number = DEFAULT_FAIR_USE_SETTINGS.workspaceRequests.ratePerSecond;

    /** Requests one Workspace may make back to back after a quiet spell. */
    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(10_000_000)
    MANGO_RATE_LIMIT_WORKSPACE_BURST: number = DEFAULT_FAIR_USE_SETTINGS.workspaceRequests.burst;

    /** Requests per second one Workspace or Environment key may make on this process. */
    @Type(() => Number)
    @IsNumber({ allowNaN: false, allowInfinity: false })
    @Min(0.001)
    @Max(1_000_000)
    MANGO_RATE_LIMIT_KEY_RPS: number = DEFAULT_FAIR_USE_SETTINGS.keyRequests.ratePerSecond;

    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(10_000_000)
    MANGO_RATE_LIMIT_KEY_BURST: number = DEFAULT_FAIR_USE_SETTINGS.keyRequests.burst;

    /** Requests per second one Work token (one sandbox's item runner) may make on this process. */
    @Type(() => Number)
    @IsNumber({ allowNaN: false, allowInfinity: false })
    @Min(0.001)
    @Max(1_000_000)
    MANGO_RATE_LIMIT_WORK_TOKEN_RPS: number = DEFAULT_FAIR_USE_SETTINGS.workTokenRequests.ratePerSecond;

    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(10_000_000)
    MANGO_RATE_LIMIT_WORK_TOKEN_BURST: number = DEFAULT_FAIR_USE_SETTINGS.workTokenRequests.burst;
  }
  return RequestRateEnv;
}

/** What `withRequestRateEnv` adds to an env DTO. */
export interface RequestRateEnv {
  MANGO_FAIR_USE: 'on' | 'off';
  MANGO_RATE_LIMIT_WORKSPACE_RPS: number;
  MANGO_RATE_LIMIT_WORKSPACE_BURST: number;
  MANGO_RATE_LIMIT_KEY_RPS: number;
  MANGO_RATE_LIMIT_KEY_BURST: number;
  MANGO_RATE_LIMIT_WORK_TOKEN_RPS: number;
  MANGO_RATE_LIMIT_WORK_TOKEN_BURST: number;
}

/** The settings from an app's validated env; `streams` only where the app serves event streams. */
export function fairUseSettingsFrom(
  env: RequestRateEnv,
  streams: { workspace: number; credential: number } | null = null,
): FairUseSettings {
  return {
    enabled: env.MANGO_FAIR_USE === 'on',
    workspaceRequests: {
      ratePerSecond: env.MANGO_RATE_LIMIT_WORKSPACE_RPS,
      burst: env.MANGO_RATE_LIMIT_WORKSPACE_BURST,
    },
    keyRequests: { ratePerSecond: env.MANGO_RATE_LIMIT_KEY_RPS, burst: env.MANGO_RATE_LIMIT_KEY_BURST },
    workTokenRequests: {
      ratePerSecond: env.MANGO_RATE_LIMIT_WORK_TOKEN_RPS,
      burst: env.MANGO_RATE_LIMIT_WORK_TOKEN_BURST,
    },
    workspaceStreams: streams?.workspace ?? null,
    credentialStreams: streams?.credential ?? null,
  };
}
