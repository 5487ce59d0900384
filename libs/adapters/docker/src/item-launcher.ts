import { rmSync } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { idPattern } from '@mango/domain-kernel';
import { encodeItemAssignment } from '@mango/domain-work-lease';
import { createDockerClient } from './docker-engine';
import {
  attachStdio,
  HEALTHCHECK_TMPFS,
  LABEL_ENVIRONMENT,
  LABEL_POOL,
  LABEL_SESSION,
  LABEL_SUPERVISOR,
  LABEL_WORK,
  sandboxBaseEnv,
  sandboxContainer,
  TMP,
} from './sandbox-container';
import {
  openWorkApiSocket,
  POOL_SOCKET_PREFIX,
  SANDBOX_SOCKET_DIR,
  workApiSocketDir,
} from './work-api-socket';
import { type PoolSlot, WarmPool } from './warm-pool';
import { egressProxyEnv, type EgressProxyOptions, type EgressSocket, openEgressSocket } from './egress-proxy';

export {
  LABEL_ENVIRONMENT,
  LABEL_POOL,
  LABEL_SESSION,
  LABEL_SUPERVISOR,
  LABEL_WORK,
} from './sandbox-container';

export interface LaunchSettings {
  dockerHost?: string;
  image: string;
  /**
   * `none` (the default: a sealed sandbox), or an operator's explicit egress choice — `host` or a named
   * Docker network. Mango itself is reached only through the Work API socket, whatever the network.
   */
  network: string;
  /** The OCI runtime (`HostConfig.Runtime`, MANGO_WORKER_RUNTIME: e.g. `runsc` for gVisor); unset: the daemon's default. */
  runtime?: string;
  /** Where the supervisor reaches Mango (MANGO_BASE_URL): the Work API socket forwards there. */
  upstreamUrl: string;
  /** A directory only the supervisor writes: one socket directory per running container. */
  socketRoot: string;
  /** Development only: bind-mount this source tree read-only at /opt/mango instead of baking it in. */
  sourceDir?: string;
  /**
   * `--workspace-root`: Session workspaces are host directories `<root>/<session id>` (bind-mounted at
   * /workspace) instead of named volumes, so an operator can stage File and Git inputs. A host path.
   */
  workspaceRoot?: string;
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  /** Identity of this supervisor, for startup reconciliation of its own containers. */
  supervisorId: string;
  /** The Environment this supervisor serves: a container it adopts at start must name it. */
  environmentId?: string;
  /** Passed to Session items: end an activation this long after the Session went idle. */
  sessionIdleMs?: number;
  /** Passed to Session items: how many calls of different Threads may run at once (docs/worker-contract.md). */
  maxConcurrentCalls?: number;
  /** The item runner's command (default: the TypeScript entry through the SWC register hook). */
  itemCommand?: string[];
  /** Passed to every item: the lease TTL its runner asks for. */
  workTtlSeconds?: number;
  /** Passed to Session items: the operator custom tools (validated JSON) the runner serves. */
  customTools?: string;
  /**
   * Told when the Docker engine stops answering while a container is watched, and when it answers again
   * (a dockerd restart: see `watchExit`), so the supervisor can say so.
   */
  onEngine?: (event: 'lost' | 'back', item: { work_id: string; container?: string }) => void;
  /**
   * The warm pool (docs/operator-guide.md "Warm pool"): this many started, Work-less containers wait for
   * healthcheck Work (`startPool`). 0 or unset: every item starts a cold container.
   */
  poolSize?: number;
  /** Told when a container could not be added to the warm pool (it retries with a backoff). */
  onPoolError?: (err: unknown) => void;
}

export interface LaunchRequest {
  workId: string;
  environmentId: string;
  workType: 'session' | 'healthcheck';
  sessionId?: string;
  /** Delivered once over the attached stdin, never in env, labels, command or logs. */
  secret: string;
  /** Bounds the whole container attempt (healthcheck: 30 s). */
  deadlineMs: number;
  /** Aborting it before the secret is written means the secret is never delivered. */
  signal: AbortSignal;
  onOutput?: (line: string) => void;
  /**
   * Session Work whose Environment allows egress (ADR 0021): the egress proxy is served in the container's
   * socket directory for this activation and the container gets the proxy variables. Unset: no egress.
   */
  egress?: EgressProxyOptions;
}

export interface LaunchOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
}

/**
 * A running Work container an earlier run of this supervisor (same MANGO_SUPERVISOR_ID) started, whose
 * labels, name, environment and socket mount were validated: it is served again instead of removed.
 */
export interface AdoptableContainer {
  containerId: string;
  workId: string;
  environmentId: string;
  workType: 'session' | 'healthcheck';
  sessionId?: string;
  /** When the container started (ms since the epoch): a healthcheck's 30 s bound counts from here. */
  startedAt: number;
}

export interface Reconciliation {
  /** Containers removed: exited or dead ones, and running ones that could not be validated. */
  removed: string[];
  /** Running containers to adopt (`DockerItemLauncher.adopt`): not removed. */
  adoptable: AdoptableContainer[];
  /** Why each running container in `removed` was not adopted (container id → reason). */
  refused: Record<string, string>;
  /** Warm-pool containers of an earlier run, removed (never adopted: they served no Work, or a healthcheck). */
  pooled: string[];
}

export interface AdoptRequest {
  container: AdoptableContainer;
  /** Bounds the rest of the container's attempt. */
  deadlineMs: number;
  signal: AbortSignal;
  onOutput?: (line: string) => void;
}

const WORK_ID = idPattern('work');
/** How often a watched container is inspected besides its wait request (see `watchExit`). */
const EXIT_WATCH_MS = 2_000;
/** How long a launch that failed before its container started waits for the engine to answer again. */
const ENGINE_RETURN_MS = 60_000;
/** How long a healthcheck waits for a warm-pool container being made before it starts a cold one. */
const POOL_WAIT_MS = 10_000;
/** Errors of a Docker request whose engine is not there (its socket gone, refusing, or closed mid-request). */
const ENGINE_GONE = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const ENVIRONMENT_ID = idPattern('environment');

/** The per-Session workspace volume: later Work for the same Session resumes the same files. */
export const sessionVolume = (sessionId: string) => `mango-session-${sessionId.toLowerCase()}`;
export const SESSION_VOLUME_PREFIX = 'mango-session-';

/** A Session id exactly (sesn_ + a Crockford ULID): the only thing a workspace path is made from. */
export const SESSION_ID = idPattern('session');

/**
 * A Session's directory under the workspace root: `<root>/<session id>`, derived from the validated id
 * only (never from input such as a File name or a Git URL), so it cannot leave the root.
 */
export function sessionWorkspaceDir(root: string, sessionId: string): string {
  if (!SESSION_ID.test(sessionId))
    throw new Error(
      `refusing a workspace for a malformed Session id ${JSON.stringify(sessionId.slice(0, 40))}`,
    );
  return join(root, sessionId);
}

/** Only NoCopy matters; the other VolumeOptions fields are optional to the Engine API. */
const NO_COPY = { NoCopy: true } as NonNullable<Docker.MountSettings['VolumeOptions']>;

/** `/mnt/memory` for Session items: Memory Store mounts (docs/api-guide.md "Memory on the worker"), not executable, owned by the runner. */
const MEMORY_TMPFS = 'rw,noexec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0700';
export { ITEM_COMMAND } from './sandbox-container';

/**
 * Runs one hardened container per acknowledged Work item (docs/operator-guide.md "The Docker supervisor"): non-root
 * uid, read-only root, all capabilities dropped, no-new-privileges, pids/memory/CPU limits, the
 * configured network, a tmpfs workspace for healthchecks (a per-Session named volume for Session Work),
 * the Work secret over a one-shot attached stdin, and removal after the activation. Docker control
 * requests are bounded to 15 s each.
 */
export class DockerItemLauncher {
  private readonly docker: Docker;
  private readonly streams: Docker;
  /** Running Work containers by Work id. */
  private readonly running = new Map<string, string>();
  private pool?: WarmPool;

  constructor(private readonly settings: LaunchSettings) {
    this.docker = createDockerClient(settings.dockerHost);
    this.streams = createDockerClient(settings.dockerHost, { timeoutMs: 0 });
  }

  /**
   * A reclaimed attempt's replacement: any container left for this Work item is validated (its labels
   * must name this Work item and Environment) and force-removed; the new container starts only after
   * removal succeeded.
   */
  async removeStale(workId: string, environmentId: string): Promise<number> {
    const stale = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_WORK}=${workId}`] },
    });
    for (const c of stale) {
      if (c.Labels[LABEL_WORK] !== workId || c.Labels[LABEL_ENVIRONMENT] !== environmentId) {
        throw new Error(`container ${c.Id} does not belong to Work ${workId}; refusing to remove it`);
      }
      await this.removeContainer(c.Id);
    }
    // An earlier attempt of this run in a pooled container (it carries no Work label).
    const pooled = this.running.get(workId);
    if (pooled && !stale.some((c) => c.Id === pooled)) {
      await this.removeContainer(pooled);
      return stale.length + 1;
    }
    return stale.length;
  }

  /**
   * Starts the warm pool (when `poolSize` > 0): after `reconcile` removed an earlier run's pool and after
   * `setItemCommand`, so pooled containers run the same command as cold ones.
   */
  startPool(): void {
    if (!this.settings.poolSize || this.pool) return;
    this.pool = new WarmPool(this.settings, this.settings.poolSize, {
      docker: this.docker,
      streams: this.streams,
      forwardLines: (io, onOutput) => this.forwardLines(io, onOutput),
      removeContainer: (id) => this.removeContainer(id),
      onError: this.settings.onPoolError,
    });
    this.pool.start();
  }

  /** Idle warm-pool containers now (0 without a pool). */
  get pooledReady(): number {
    return this.pool?.ready ?? 0;
  }

  /** Drain/shutdown: the warm pool stops refilling and its idle containers are removed. */
  async closePool(): Promise<void> {
    await this.pool?.close();
  }

  /** The item runner's command, when it is known only after start-up (precompiled from the source tree). */
  setItemCommand(command: string[] | undefined): void {
    this.settings.itemCommand = command;
  }

  /**
   * Startup reconciliation of the containers this supervisor identity left behind (a crash, kill -9):
   * a **running** Work container whose labels, name, Environment and Work API socket mount validate is
   * returned to be adopted (`adopt`): its runner still holds its lease and only lost the socket, so it
   * is served again instead of being removed (which would run its tool call a second time after the
   * reclaim). Everything else — exited or dead containers, workspace chown containers, anything that does
   * not validate — is force-removed as before; its Work is reclaimed after its lease expires.
   */
  async reconcile(): Promise<Reconciliation> {
    const left = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_SUPERVISOR}=${this.settings.supervisorId}`] },
    });
    const result: Reconciliation = { removed: [], adoptable: [], refused: {}, pooled: [] };
    for (const c of left) {
      if (c.Labels[LABEL_POOL] !== undefined) {
        await this.removeContainer(c.Id);
        this.removePoolSocketDir(c.Mounts.find((m) => m.Destination === SANDBOX_SOCKET_DIR)?.Source);
        result.pooled.push(c.Id);
        continue;
      }
      if (c.State === 'running') {
        const checked = await this.adoptable(c.Id).catch((err: unknown) => String(err));
        if (typeof checked !== 'string') {
          result.adoptable.push(checked);
          continue;
        }
        result.refused[c.Id] = checked;
      }
      await this.removeContainer(c.Id);
      result.removed.push(c.Id);
    }
    return result;
  }

  /** A removed pool container's socket directory: only a `pool-…` directory right under the socket root. */
  private removePoolSocketDir(dir: string | undefined): void {
    if (!dir || dirname(dir) !== this.settings.socketRoot || !basename(dir).startsWith(POOL_SOCKET_PREFIX))
      return;
    rmSync(dir, { recursive: true, force: true });
  }

  /** A running container's claim to be adopted, or why it is refused. */
  private async adoptable(id: string): Promise<AdoptableContainer | string> {
    const info = await this.docker.getContainer(id).inspect();
    const labels = info.Config.Labels ?? {};
    const workId = labels[LABEL_WORK];
    const environmentId = labels[LABEL_ENVIRONMENT];
    const sessionId = labels[LABEL_SESSION];
    if (!info.State.Running) return 'not running';
    if (labels[LABEL_SUPERVISOR] !== this.settings.supervisorId) return 'another supervisor id';
    if (!workId || !WORK_ID.test(workId)) return 'no valid Work id label';
    if (!environmentId || !ENVIRONMENT_ID.test(environmentId)) return 'no valid Environment label';
    if (this.settings.environmentId !== undefined && environmentId !== this.settings.environmentId)
      return `it serves Environment ${environmentId}, not this supervisor's`;
    if (sessionId !== undefined && !SESSION_ID.test(sessionId)) return 'a malformed Session label';
    if (info.Name !== `/mango-${workId.toLowerCase()}`) return 'its name does not match its Work id';
    const env = new Map(
      (info.Config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
    const workType = env.get('MANGO_WORK_TYPE');
    if (env.get('MANGO_WORK_ID') !== workId || env.get('MANGO_ENVIRONMENT_ID') !== environmentId)
      return 'its environment does not match its labels';
    if (workType !== 'session' && workType !== 'healthcheck') return 'an unknown Work type';
    if (workType === 'session' && (!sessionId || env.get('MANGO_SESSION_ID') !== sessionId))
      return 'a Session container without its Session';
    // The socket must be served again at the very host directory the container has mounted.
    const socketDir = workApiSocketDir(this.settings.socketRoot, workId);
    const mount = info.Mounts.find((m) => m.Destination === SANDBOX_SOCKET_DIR);
    if (!mount || mount.Source !== socketDir)
      return `its Work API socket is not mounted from ${socketDir} (another MANGO_WORKER_SOCKET_DIR?)`;
    const dir = await lstat(socketDir).catch(() => undefined);
    if (!dir?.isDirectory() || dir.isSymbolicLink()) return `its socket directory ${socketDir} is gone`;
    return {
      containerId: info.Id,
      workId,
      environmentId,
      workType,
      ...(workType === 'session' ? { sessionId } : {}),
      startedAt: Date.parse(info.State.StartedAt),
    };
  }

  /**
   * Serves an adopted container (see `reconcile`) until it exits, like one this run launched: its Work
   * API socket is served again in the directory it has mounted (its runner's retries get through again),
   * drain and the deadline apply, and on exit it is removed and its socket closed. Its secret is not
   * known any more (it was delivered once over stdin), so nothing is posted for it by the supervisor.
   */
  async adopt(req: AdoptRequest): Promise<LaunchOutcome> {
    const { containerId, workId } = req.container;
    let socket: Awaited<ReturnType<typeof openWorkApiSocket>>;
    try {
      socket = await openWorkApiSocket({
        root: this.settings.socketRoot,
        workId,
        upstream: this.settings.upstreamUrl,
        reuse: true,
      });
    } catch (err) {
      await this.removeContainer(containerId);
      throw err;
    }
    try {
      // `not-running`: returns at once if it exited since the listing.
      const exited = this.streams.getContainer(containerId).wait({ condition: 'not-running' });
      exited.catch(() => undefined); // settled by watchExit
      if (req.onOutput) {
        // Its output from now on (best effort: a failed attach does not cost the runner its container).
        const io = (await this.streams
          .getContainer(containerId)
          .attach({ stream: true, stdout: true, stderr: true })
          .catch(() => undefined)) as NodeJS.ReadableStream | undefined;
        if (io) this.forwardLines(io, req.onOutput);
      }
      this.running.set(workId, containerId);
      return await this.outcome(workId, containerId, exited, req.deadlineMs, req.signal);
    } finally {
      if (this.running.get(workId) === containerId) this.running.delete(workId);
      try {
        await this.removeContainer(containerId);
      } finally {
        await socket.close();
      }
    }
  }

  /** Demultiplexes a container's output stream into lines. */
  private forwardLines(io: NodeJS.ReadableStream, onOutput: (line: string) => void): void {
    const out = new PassThrough();
    this.streams.modem.demuxStream(io, out, out);
    let buffered = '';
    out.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        onOutput(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
  }

  /** Waits for the container's exit, its deadline or cancellation (the last two kill it). */
  private async outcome(
    workId: string,
    containerId: string,
    exited: Promise<unknown>,
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<LaunchOutcome> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>(
      (resolve) => (timer = setTimeout(() => resolve('deadline'), deadlineMs)),
    );
    const cancelled = new Promise<'cancelled'>((resolve) => {
      if (signal.aborted) resolve('cancelled');
      signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
    });
    const stopWatching = new AbortController();
    const first = await Promise.race([
      this.watchExit(workId, containerId, exited, stopWatching.signal),
      deadline,
      cancelled,
    ]).finally(() => stopWatching.abort());
    clearTimeout(timer);
    if (first === 'deadline' || first === 'cancelled') {
      await this.docker
        .getContainer(containerId)
        .kill()
        .catch(() => undefined);
      return { exitCode: null, timedOut: first === 'deadline', cancelled: first === 'cancelled' };
    }
    return {
      exitCode: (first as { StatusCode: number | null }).StatusCode,
      timedOut: false,
      cancelled: false,
    };
  }

  /**
   * The container's exit: its wait request's answer, or its state when that request can no longer answer.
   * A dockerd restart closes the wait request without an answer (the promise never settles) while the
   * container lives on (live-restore) or is stopped by the daemon on its way down, so the container is
   * also inspected every EXIT_WATCH_MS: once the engine answers again, a container that is no longer
   * running ends the watch with its exit code, and a running one is watched on (its Work API socket stays
   * served meanwhile: the runner keeps its lease and delivers its result). A container gone altogether
   * (removed meanwhile) ends it with the exit code null.
   */
  private async watchExit(
    workId: string,
    containerId: string,
    exited: Promise<unknown>,
    stop: AbortSignal,
  ): Promise<{ StatusCode: number | null }> {
    let waitFailed = false;
    const waited = exited.then(
      (r) => r as { StatusCode: number },
      () => {
        waitFailed = true;
        return 'failed' as const;
      },
    );
    let lost = false;
    for (;;) {
      const tick = new Promise<'tick'>((r) => setTimeout(() => r('tick'), EXIT_WATCH_MS).unref());
      const first = await Promise.race(waitFailed ? [tick] : [waited, tick]);
      if (first !== 'tick' && first !== 'failed') return first;
      if (stop.aborted) return { StatusCode: null };
      const state = await this.docker
        .getContainer(containerId)
        .inspect()
        .then(
          (info) => ({ running: info.State.Running, exitCode: info.State.ExitCode as number | null }),
          (err: { statusCode?: number }) =>
            err.statusCode === 404 ? { running: false, exitCode: null } : undefined,
        );
      if (!state) {
        if (!lost) this.settings.onEngine?.('lost', { work_id: workId, container: containerId });
        lost = true;
        continue;
      }
      if (lost) this.settings.onEngine?.('back', { work_id: workId, container: containerId });
      lost = false;
      if (!state.running) return { StatusCode: state.exitCode };
    }
  }

  /**
   * A Session's new activation replaces any earlier one still running on this engine (its Work is already
   * stopped or reclaimed — only one live Work item per Session exists): validated by its labels and
   * force-removed before the new container starts, so two activations never share the workspace.
   */
  async removeEarlierActivations(sessionId: string, environmentId: string): Promise<number> {
    const earlier = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_SESSION}=${sessionId}`] },
    });
    for (const c of earlier) {
      if (c.Labels[LABEL_SESSION] !== sessionId || c.Labels[LABEL_ENVIRONMENT] !== environmentId) {
        throw new Error(`container ${c.Id} does not belong to Session ${sessionId}; refusing to remove it`);
      }
      await this.removeContainer(c.Id); // gone meanwhile, or being removed by its adopter: fine
    }
    return earlier.length;
  }

  /**
   * Launches the item's container. A launch that fails before its container started because the engine
   * does not answer or answers 5xx (a dockerd restart: the Work was claimed while the daemon shut down,
   * e.g. `database not open`, or was down) is tried again from the start — stale containers are removed
   * first, and the secret was never delivered — once the engine answers, with a backoff, for up to
   * ENGINE_RETURN_MS, instead of leaving the claimed Work to its lease's expiry.
   */
  async launch(req: LaunchRequest): Promise<LaunchOutcome> {
    const attempt = { started: false };
    const deadline = Date.now() + ENGINE_RETURN_MS;
    for (let backoff = 1000, told = false; ; backoff = Math.min(backoff * 2, 8000)) {
      try {
        return await this.launchOnce(req, attempt);
      } catch (err) {
        const { statusCode: status, code } = err as { statusCode?: number; code?: string };
        const engineTrouble =
          status !== undefined
            ? status >= 500
            : ENGINE_GONE.has(code ?? '') || /socket hang up/.test(String(err));
        if (attempt.started || !engineTrouble || req.signal.aborted || Date.now() > deadline) throw err;
        if (!told) this.settings.onEngine?.('lost', { work_id: req.workId });
        told = true;
        await new Promise((r) => setTimeout(r, backoff));
        while (!(await this.engineAnswers())) {
          if (Date.now() > deadline || req.signal.aborted) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
        this.settings.onEngine?.('back', { work_id: req.workId });
      }
    }
  }

  private engineAnswers(): Promise<boolean> {
    return this.docker.ping().then(
      () => true,
      () => false,
    );
  }

  private async launchOnce(req: LaunchRequest, attempt: { started: boolean }): Promise<LaunchOutcome> {
    await this.removeStale(req.workId, req.environmentId);
    if (req.workType === 'session') await this.removeEarlierActivations(req.sessionId!, req.environmentId);
    if (req.signal.aborted) return { exitCode: null, timedOut: false, cancelled: true };
    // Healthcheck Work only: Session Work needs its workspace mounted, which a started container cannot get.
    const slot = req.workType === 'healthcheck' ? await this.pool?.take(POOL_WAIT_MS, req.signal) : undefined;
    if (slot) return this.launchPooled(req, slot, attempt);
    const socket = await openWorkApiSocket({
      root: this.settings.socketRoot,
      workId: req.workId,
      upstream: this.settings.upstreamUrl,
    });
    let egress: EgressSocket | undefined;
    try {
      if (req.egress) egress = await openEgressSocket(socket.dir, req.egress);
      return await this.launchWithSocket(req, socket.dir, attempt, egress ? egressProxyEnv() : []);
    } finally {
      await egress?.close();
      await socket.close();
    }
  }

  private async launchWithSocket(
    req: LaunchRequest,
    socketDir: string,
    attempt: { started: boolean },
    egressEnv: string[],
  ): Promise<LaunchOutcome> {
    const env = [
      ...egressEnv,
      `MANGO_WORK_ID=${req.workId}`,
      `MANGO_ENVIRONMENT_ID=${req.environmentId}`,
      `MANGO_WORK_TYPE=${req.workType}`,
      ...sandboxBaseEnv(this.settings),
      ...(req.sessionId ? [`MANGO_SESSION_ID=${req.sessionId}`] : []),
      ...(this.settings.customTools && req.workType === 'session'
        ? [`MANGO_CUSTOM_TOOLS=${this.settings.customTools}`]
        : []),
    ];
    let workspace: Docker.MountSettings | undefined;
    if (req.workType === 'session') workspace = await this.ensureWorkspace(req.sessionId!, req.environmentId);
    if (req.signal.aborted) return { exitCode: null, timedOut: false, cancelled: true };
    const mounts: Pick<Docker.HostConfig, 'Tmpfs' | 'Mounts'> =
      req.workType === 'healthcheck'
        ? { Tmpfs: HEALTHCHECK_TMPFS }
        : {
            // Attached Memory Stores are synchronized copies: a private tmpfs per activation.
            Tmpfs: { '/tmp': TMP, '/mnt/memory': MEMORY_TMPFS },
            Mounts: [workspace!],
          };
    const container: Docker.Container = await this.docker.createContainer(
      sandboxContainer(this.settings, {
        name: `mango-${req.workId.toLowerCase()}`,
        env,
        labels: {
          [LABEL_WORK]: req.workId,
          [LABEL_ENVIRONMENT]: req.environmentId,
          [LABEL_SUPERVISOR]: this.settings.supervisorId,
          ...(req.workType === 'session' ? { [LABEL_SESSION]: req.sessionId! } : {}),
        },
        mounts,
        socketDir,
      }),
    );
    try {
      const io = await attachStdio(this.streams, container.id);
      this.forwardLines(io, (line) => req.onOutput?.(line));
      // `next-exit`: a created container is already "not running", so the default condition returns at once.
      const exited = this.streams.getContainer(container.id).wait({ condition: 'next-exit' });
      exited.catch(() => undefined); // settled by watchExit; a failed start is thrown below
      await container.start();
      attempt.started = true;
      // No secret after cancellation, even when Start answered late.
      if (req.signal.aborted) {
        io.end();
        await container.kill().catch(() => undefined);
        return { exitCode: null, timedOut: false, cancelled: true };
      }
      this.running.set(req.workId, container.id);
      io.write(`${req.secret}\n`);
      io.end();
      return await this.outcome(req.workId, container.id, exited, req.deadlineMs, req.signal);
    } finally {
      if (this.running.get(req.workId) === container.id) this.running.delete(req.workId);
      await this.removeContainer(container.id);
    }
  }

  /**
   * An acknowledged healthcheck in a warm-pool container: its Work API socket is opened in the slot's
   * (so far empty) socket directory, then its one assignment line (Work identity and secret) is written
   * to the runner waiting on stdin. Served to its exit like a cold container, then removed (never reused).
   */
  private async launchPooled(
    req: LaunchRequest,
    slot: PoolSlot,
    attempt: { started: boolean },
  ): Promise<LaunchOutcome> {
    let socket: Awaited<ReturnType<typeof openWorkApiSocket>> | undefined;
    try {
      socket = await openWorkApiSocket({
        root: this.settings.socketRoot,
        workId: req.workId,
        upstream: this.settings.upstreamUrl,
        dir: slot.socketDir,
      });
      slot.onOutput((line) => req.onOutput?.(line));
      attempt.started = true;
      // No secret after cancellation.
      if (req.signal.aborted) return { exitCode: null, timedOut: false, cancelled: true };
      this.running.set(req.workId, slot.containerId);
      slot.io.write(
        encodeItemAssignment({
          work_id: req.workId,
          environment_id: req.environmentId,
          work_type: 'healthcheck',
          secret: req.secret,
        }),
      );
      slot.io.end();
      return await this.outcome(req.workId, slot.containerId, slot.exited, req.deadlineMs, req.signal);
    } finally {
      if (this.running.get(req.workId) === slot.containerId) this.running.delete(req.workId);
      try {
        await this.removeContainer(slot.containerId);
      } finally {
        await socket?.close();
        rmSync(slot.socketDir, { recursive: true, force: true });
      }
    }
  }

  /** Asks one running item (SIGTERM) to deliver its result and Stop, then exit; false when none runs. */
  async drain(workId: string): Promise<boolean> {
    const id = this.running.get(workId);
    if (!id) return false;
    return this.docker
      .getContainer(id)
      .kill({ signal: 'SIGTERM' })
      .then(() => true)
      .catch(() => false);
  }

  /** Graceful shutdown: asks every running item (SIGTERM) to deliver its result and Stop, then exit. */
  async drainAll(): Promise<number> {
    const ids = [...this.running.values()];
    await Promise.all(
      ids.map((id) =>
        this.docker
          .getContainer(id)
          .kill({ signal: 'SIGTERM' })
          .catch(() => undefined),
      ),
    );
    return ids.length;
  }

  /** The Session's /workspace mount: its directory under the workspace root, or its named volume. */
  private async ensureWorkspace(sessionId: string, environmentId: string): Promise<Docker.MountSettings> {
    if (this.settings.workspaceRoot) {
      const dir = await this.ensureWorkspaceDir(sessionWorkspaceDir(this.settings.workspaceRoot, sessionId));
      return { Type: 'bind', Source: dir, Target: '/workspace', BindOptions: { Propagation: 'rprivate' } };
    }
    const name = sessionVolume(sessionId);
    await this.ensureWorkspaceVolume(name, sessionId, environmentId);
    // No copy-up: Docker would reset the (empty) volume's owner to the image's root-owned dir.
    return { Type: 'volume', Source: name, Target: '/workspace', VolumeOptions: NO_COPY };
  }

  /**
   * `<root>/<session id>`: an existing directory (an operator staged inputs there) is used as it is; a
   * symlink or any other file type is refused, so the mount never follows a link out of the root. A
   * missing one is created (mode 0700) and handed to the sandbox uid by the one-shot chown container.
   */
  private async ensureWorkspaceDir(dir: string): Promise<string> {
    const root = await lstat(this.settings.workspaceRoot!).catch(() => undefined);
    if (!root?.isDirectory())
      throw new Error(`the workspace root ${this.settings.workspaceRoot} is not a directory`);
    const found = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (found) {
      if (!found.isDirectory() || found.isSymbolicLink())
        throw new Error(`the Session workspace ${dir} exists and is not a directory; refusing to mount it`);
      return dir;
    }
    await mkdir(dir, { mode: 0o700 });
    await this.chownWorkspace({ Type: 'bind', Source: dir, Target: '/workspace' }, dir);
    return dir;
  }

  /**
   * The Session's named workspace volume, created on first use and handed to the sandbox uid (1000) by a
   * one-shot root container that may only chown (no network, no other capabilities).
   */
  private async ensureWorkspaceVolume(name: string, sessionId: string, environmentId: string): Promise<void> {
    const exists = await this.docker
      .getVolume(name)
      .inspect()
      .then(
        () => true,
        (err: { statusCode?: number }) => {
          if (err.statusCode === 404) return false;
          throw err;
        },
      );
    if (exists) return;
    await this.docker.createVolume({
      Name: name,
      Labels: {
        [LABEL_SUPERVISOR]: this.settings.supervisorId,
        [LABEL_SESSION]: sessionId,
        [LABEL_ENVIRONMENT]: environmentId,
      },
    });
    await this.chownWorkspace(
      { Type: 'volume', Source: name, Target: '/workspace', VolumeOptions: NO_COPY },
      name,
    );
  }

  /** Hands a new workspace to uid 1000 (mode 0700) from a one-shot root container that may only chown. */
  private async chownWorkspace(mount: Docker.MountSettings, name: string): Promise<void> {
    const init: Docker.Container = await this.docker.createContainer({
      Image: this.settings.image,
      Entrypoint: ['node'],
      Cmd: [
        '-e',
        "const fs=require('fs');fs.chmodSync('/workspace',0o700);fs.chownSync('/workspace',1000,1000)",
      ],
      User: '0:0',
      Labels: { [LABEL_SUPERVISOR]: this.settings.supervisorId },
      HostConfig: {
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        CapAdd: ['CHOWN'],
        SecurityOpt: ['no-new-privileges'],
        Mounts: [mount],
      },
    });
    try {
      const exited = this.streams.getContainer(init.id).wait({ condition: 'next-exit' });
      await init.start();
      const { StatusCode } = (await exited) as { StatusCode: number };
      if (StatusCode !== 0) throw new Error(`preparing workspace ${name} failed (exit ${StatusCode})`);
    } finally {
      await this.removeContainer(init.id);
    }
  }

  /** Force-removes a container (and its anonymous tmpfs); retried once within the 15 s bound each. */
  /**
   * Force-removes a container; done when it is gone. Another removal already under way (409 "removal of
   * container … is already in progress": e.g. a Session's next activation removing an adopted container
   * while its adopter cleans up) is waited for, up to 30 s, instead of failing the caller's clean-up.
   */
  private async removeContainer(id: string): Promise<void> {
    const status = (err: unknown) => (err as { statusCode?: number }).statusCode;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.docker.getContainer(id).remove({ force: true });
        return;
      } catch (err) {
        if (status(err) === 404) return;
        if (attempt >= 2 && status(err) !== 409) throw err;
        if (status(err) === 409) {
          for (let i = 0; i < 150; i++) {
            const gone = await this.docker
              .getContainer(id)
              .inspect()
              .then(
                () => false,
                (e: unknown) => status(e) === 404,
              );
            if (gone) return;
            await new Promise((r) => setTimeout(r, 200));
          }
          throw err;
        }
      }
    }
  }
}
