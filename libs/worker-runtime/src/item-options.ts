import type { CustomToolSpec } from './custom-tools';
import type { ProbeResult } from './healthcheck-probe';
import type { ToolRoot } from './tools/types';

/*
 * The option and log types shared by the Work item runner and everything it starts (the Session
 * activation, the tool runner, Memory sync). A leaf: it imports no runtime module, so the runner's parts
 * depend on it instead of on the entry file (that was an import circle).
 */

export interface ItemIdentity {
  workId: string;
  environmentId: string;
  workType: 'session' | 'healthcheck';
  sessionId?: string;
}

export interface ItemLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The provider-owned healthcheck callback: a bounded context (signal) and the local work directory. */
export type HealthcheckCallback = (ctx: { signal: AbortSignal; workdir: string }) => Promise<ProbeResult>;

export interface HandleItemOptions {
  identity: ItemIdentity;
  /** The raw Work secret (from the launcher's one-shot stdin). */
  secret: string;
  /** Where the sandbox reaches the Mango API. */
  baseUrl: string;
  workdir: string;
  log: ItemLog;
  healthcheck?: HealthcheckCallback;
  /** Attached Memory Store roots the file tools may use besides the workdir. */
  roots?: ToolRoot[];
  /** A Session activation ends this long after the Session went idle (default 60 s). */
  maxIdleMs?: number;
  /** Called after each dispatched Session tool call (e.g. Memory sync at its cadence). */
  afterToolCall?: () => Promise<void>;
  /** Graceful shutdown (SIGTERM): a Session finishes and posts its call in flight, then Stops. */
  drain?: AbortSignal;
  /** The lease TTL asked for on every heartbeat (renewed at a third of it; default 60 s). */
  leaseTtlSeconds?: number;
  /** The shell's base environment: an allowlist (Mango credentials are scrubbed from it regardless). */
  shellEnv?: NodeJS.ProcessEnv;
  /** Operator custom tools this worker serves (docs/operator-guide.md "Operator custom tools"). */
  customTools?: CustomToolSpec[];
  /** Where attached Memory Stores are mounted (default `/mnt/memory`, a tmpfs in the Work container). */
  memoryRoot?: string;
  /**
   * The worker contract's parameters (docs/worker-contract.md; defaults in worker-contract.ts): calls of
   * different Threads run at once (default 1), a tool call's bound (325 s), a bash command's default
   * bound (295 s).
   */
  maxConcurrentCalls?: number;
  toolTimeoutMs?: number;
  bashTimeoutMs?: number;
}
