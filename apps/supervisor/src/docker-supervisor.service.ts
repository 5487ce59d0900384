import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  AdoptableContainer,
  createDockerClient,
  DockerItemLauncher,
  engineInfo,
  imageItemEntry,
  removeSessionWorkspace,
  resolveSandboxRuntime,
  sessionWorkspacesOf,
} from '@mango/adapter-docker';
import { decodeWorkSecret, isRetryableStatus, MangoClient } from '@mango/sdk';
import {
  AcknowledgedWork,
  IdleActivations,
  loadCustomTools,
  parseToolReport,
  pollWork,
  sleep,
  toolReportWindow,
  workTraceparent,
} from '@mango/worker-runtime';
import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { MangoMetrics } from '@mango/platform-metrics';
import {
  context,
  Context,
  contextFrom,
  recordSpan,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
} from '@mango/platform-tracing';
import { compileItemRunner, markRunnerUsed } from './compile-runner';
import { type ActivationEgress, SandboxEgress } from './sandbox-egress';
import { SupervisorEnv } from './supervisor.env';

export const SUPERVISOR_ENV = Symbol('SUPERVISOR_ENV');
export const LOGGER = Symbol('LOGGER');
const ENGINE_CHECK_INTERVAL_MS = 15_000;
/** How often a running supervisor marks its item runner build as used (builds unused for 24 h are pruned). */
const RUNNER_IN_USE_MS = 3600_000;
/** The Docker launcher (docs/operator-guide.md, The Docker supervisor) bounds a healthcheck container attempt to 30 seconds. */
const HEALTHCHECK_CONTAINER_BOUND_MS = 30_000;
/** How long shutdown waits for running items to deliver results, tear down and Stop before hard kill. */
const SHUTDOWN_GRACE_MS = 5 * 60_000;
/** A Poll with a free slot waits this long for Work (long poll). */
const POLL_BLOCK_MS = 10_000;
/** At capacity, how often it looks (a Poll that returns at once) for Work an idle activation could make room for. */
const CAPACITY_POLL_MS = 1000;
/** An activation idle for less than this is not asked to end (its Session may well go on at once). */
const YIELD_MIN_IDLE_MS = 2000;

/**
 * `mango-worker docker`: Poll and Ack with the Environment key, one hardened container per acknowledged
 * item, up to MANGO_MAX_CONCURRENT_ITEMS at once. Shutdown drains: no new claims, running items finish
 * their result delivery and final Stop (inside their containers) before the process exits.
 */
@Injectable()
export class DockerSupervisorService implements OnApplicationBootstrap, OnApplicationShutdown {
  private watch?: NodeJS.Timeout;
  /** Keeps this supervisor's item runner build marked as used (compile-runner.ts prunes unused ones). */
  private runnerInUse?: NodeJS.Timeout;
  private engineUp = true;
  private readonly draining = new AbortController();
  /** Aborted when the shutdown grace is over: running containers are killed. */
  private readonly hardStop = new AbortController();
  private readonly running = new Set<Promise<void>>();
  /** Running Session activations waiting out their idle time (what their runners report). */
  private readonly idle = new IdleActivations();
  private lastCapacityPoll = 0;
  private loop?: Promise<void>;
  private launcher!: DockerItemLauncher;
  /** The operator custom tools this worker serves: the custom names a tool report may carry. */
  private customToolNames: ReadonlySet<string> = new Set();
  /** Sandbox egress (ADR 0021): the operator's settings and each activation's Environment policy. */
  private egress!: SandboxEgress;

  constructor(
    @Inject(SUPERVISOR_ENV) private readonly env: SupervisorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Validated before anything else: a bad file stops the supervisor with a message naming the field.
    const customTools = this.env.MANGO_WORKER_CUSTOM_TOOLS
      ? await loadCustomTools(this.env.MANGO_WORKER_CUSTOM_TOOLS)
      : [];
    this.customToolNames = new Set(customTools.map((t) => t.name));
    this.egress = new SandboxEgress(this.env, this.log, this.metrics);
    await this.egress.start();
    if (customTools.length)
      this.log.info(
        { custom_tools: customTools.map((t) => t.name) },
        'operator custom tools registered: Sessions whose Agent declares them are answered by this worker',
      );
    const docker = createDockerClient(this.env.DOCKER_HOST);
    const info = await engineInfo(docker);
    // Before 'docker engine connected': a runtime the daemon does not declare stops the supervisor here.
    const runtime = this.env.MANGO_WORKER_RUNTIME
      ? resolveSandboxRuntime(
          this.env.MANGO_WORKER_RUNTIME,
          ((await docker.info()) as { Runtimes?: Record<string, { path?: string; runtimeArgs?: string[] }> })
            .Runtimes,
        )
      : undefined;
    this.log.info(
      {
        docker_version: info.version,
        docker_api_version: info.apiVersion,
        environment_id: this.env.MANGO_ENVIRONMENT_ID,
        base_url: this.env.MANGO_BASE_URL,
        sandbox_network: this.env.MANGO_WORKER_NETWORK,
        sandbox_runtime: runtime?.name ?? 'default',
        ...(runtime?.gvisor ? { sandbox_pids_limit: runtime.pidsLimit } : {}),
      },
      'docker engine connected',
    );
    if (this.env.MANGO_WORKER_NETWORK !== 'none')
      this.log.warn(
        { sandbox_network: this.env.MANGO_WORKER_NETWORK },
        'sandboxes are not sealed: their network was chosen by MANGO_WORKER_NETWORK (see the operator guide)',
      );
    const workspaceRoot = this.env.MANGO_WORKER_WORKSPACE_ROOT;
    if (workspaceRoot) {
      const root = await stat(workspaceRoot).catch(() => undefined);
      if (!root?.isDirectory())
        throw new Error(`MANGO_WORKER_WORKSPACE_ROOT ${workspaceRoot} is not an existing directory`);
      this.log.info(
        { workspace_root: workspaceRoot },
        'Session workspaces are directories under the workspace root',
      );
    }
    this.watch = setInterval(() => void this.checkEngine(docker), ENGINE_CHECK_INTERVAL_MS);
    const supervisorId =
      this.env.MANGO_SUPERVISOR_ID ?? `${hostname()}-${this.env.MANGO_ENVIRONMENT_ID}`.toLowerCase();
    this.launcher = new DockerItemLauncher({
      dockerHost: this.env.DOCKER_HOST,
      image: this.env.MANGO_WORKER_IMAGE,
      network: this.env.MANGO_WORKER_NETWORK,
      runtime: runtime?.name,
      pidsLimit: runtime?.pidsLimit,
      upstreamUrl: this.env.MANGO_BASE_URL,
      socketRoot: this.env.MANGO_WORKER_SOCKET_DIR,
      sourceDir: this.env.MANGO_WORKER_SOURCE_DIR,
      workspaceRoot,
      supervisorId,
      environmentId: this.env.MANGO_ENVIRONMENT_ID,
      sessionIdleMs: this.env.MANGO_SESSION_IDLE_MS,
      maxConcurrentCalls: this.env.MANGO_MAX_CONCURRENT_CALLS,
      workTtlSeconds: this.env.MANGO_WORK_TTL_SECONDS,
      customTools: customTools.length ? JSON.stringify(customTools) : undefined,
      poolSize: this.env.MANGO_WORKER_POOL_SIZE,
      onPoolError: (err) =>
        this.log.warn({ err: String(err) }, 'could not add a container to the warm pool; retrying'),
      // A dockerd restart while items run (docs/operator-guide.md, The Docker supervisor).
      onEngine: (event, item) =>
        event === 'lost'
          ? this.log.warn(item, 'docker engine unreachable during an item: waiting for it to answer again')
          : this.log.info(item, 'docker engine is back: the item goes on'),
    });
    // Before anything slow (the item runner's precompilation): adopted runners are retrying meanwhile.
    await this.reconcile();
    this.launcher.setItemCommand(await this.itemCommand(docker));
    this.launcher.startPool();
    if (this.env.MANGO_WORKER_POOL_SIZE)
      this.log.info(
        { pool_size: this.env.MANGO_WORKER_POOL_SIZE },
        'warm pool on: healthcheck Work is served by pre-started containers',
      );
    this.loop = this.run(supervisorId);
  }

  /**
   * Startup reconciliation (docs/operator-guide.md, "Supervisor restarts"): running containers an earlier
   * run of this supervisor id left are adopted — served again and counted against
   * MANGO_MAX_CONCURRENT_ITEMS until they exit — so a tool call in flight runs once; the rest are removed.
   */
  private async reconcile(): Promise<void> {
    const { removed, adoptable, refused, pooled } = await this.launcher.reconcile();
    if (pooled.length)
      this.log.info({ containers: pooled }, 'removed warm-pool containers left by an earlier run');
    if (removed.length)
      this.log.warn(
        { containers: removed, refused },
        'removed containers left by an earlier run (their Work will be reclaimed)',
      );
    for (const container of adoptable) {
      const task = this.runAdopted(container).finally(() => {
        this.running.delete(task);
        this.idle.forget(container.workId);
      });
      this.running.add(task);
    }
  }

  /** An adopted container, served until it exits, then removed like any other (see `runItem`). */
  private async runAdopted(container: AdoptableContainer): Promise<void> {
    const { workId, workType, sessionId } = container;
    const log = this.log.child({ work_id: workId, work_type: workType });
    log.info(
      { container: container.containerId, session_id: sessionId },
      'adopted a running container left by an earlier run: serving its Work API socket again',
    );
    const started = Date.now();
    const bound =
      workType === 'healthcheck'
        ? Math.max(0, container.startedAt + HEALTHCHECK_CONTAINER_BOUND_MS - Date.now())
        : 24 * 3600_000;
    let sessionDeleted = false;
    try {
      const outcome = await this.launcher.adopt({
        container,
        deadlineMs: bound,
        signal: this.hardStop.signal,
        onOutput: (line) => {
          sessionDeleted ||= sessionId !== undefined && reportsDeletion(line, sessionId);
          if (sessionId) this.idle.observe(workId, sessionId, line);
          // No span: this run of the supervisor holds no `mango.environment.work` span for it.
          this.toolReported(line, { since: started, sessionId, workId });
          log.info({ item: line.slice(0, 2000) }, 'item output');
        },
      });
      log.info({ ...outcome, ms: Date.now() - started }, 'adopted item container finished and was removed');
      // Its Work token was delivered once over stdin to the container: a killed adopted item cannot be
      // force-stopped by us (stopKilledItem); its lease expires and the Work is reclaimed.
      if (sessionDeleted) await this.collectWorkspace(sessionId!, log);
      if (outcome.timedOut) this.metrics.containerFailures.inc({ work_type: workType, reason: 'timeout' });
      else if (!outcome.cancelled && outcome.exitCode !== 0)
        this.metrics.containerFailures.inc({ work_type: workType, reason: 'exit_nonzero' });
    } catch (err) {
      this.metrics.containerFailures.inc({ work_type: workType, reason: 'launch_error' });
      log.error(
        { err: String(err) },
        'could not adopt the container; it was removed and its Work will be reclaimed',
      );
    }
  }

  /**
   * The item runner's command: precompiled from the mounted source tree (development), or the image's
   * precompiled entry (MANGO_ITEM_ENTRY), else the TypeScript entry through the SWC hook.
   */
  private async itemCommand(docker: Docker): Promise<string[] | undefined> {
    const source = this.env.MANGO_WORKER_SOURCE_DIR;
    if (!source) {
      const entry = await imageItemEntry(docker, this.env.MANGO_WORKER_IMAGE).catch(() => undefined);
      if (entry) this.log.info({ entry }, 'the worker image provides a precompiled item runner');
      return entry ? ['node', entry] : undefined;
    }
    try {
      const { entry, notBundled, dir } = await compileItemRunner(source);
      if (notBundled)
        this.log.warn(
          { entry, reason: notBundled },
          'item runner precompiled from the source tree, but not bundled: containers load it file by file',
        );
      else this.log.info({ entry }, 'item runner precompiled and bundled from the source tree');
      clearInterval(this.runnerInUse);
      this.runnerInUse = setInterval(() => markRunnerUsed(dir), RUNNER_IN_USE_MS);
      this.runnerInUse.unref();
      return ['node', `/opt/mango/${entry}`];
    } catch (err) {
      this.log.warn(
        { err: String(err) },
        'could not precompile the item runner; containers transpile it at start',
      );
      return undefined;
    }
  }

  private async run(workerId: string): Promise<void> {
    const client = new MangoClient({
      baseUrl: this.env.MANGO_BASE_URL,
      apiKey: this.env.MANGO_ENVIRONMENT_KEY,
      maxRetries: 0,
    });
    try {
      // Adopted containers count against the limit before the first claim.
      for await (const item of pollWork({
        client,
        environmentId: this.env.MANGO_ENVIRONMENT_ID,
        workerId,
        signal: this.draining.signal,
        onError: (err, attempt) => this.log.warn({ err: String(err), attempt }, 'poll failed; backing off'),
        beforePoll: () => this.nextPoll(),
        beforeAck: () => this.makeRoom(),
      })) {
        const task = this.runItem(item).finally(() => {
          this.running.delete(task);
          this.idle.forget(item.work.id);
        });
        this.running.add(task);
      }
    } catch (err) {
      this.log.fatal({ err: String(err) }, 'the Environment key was refused; stopping to claim Work');
    }
  }

  private get atCapacity(): boolean {
    return this.running.size >= this.env.MANGO_MAX_CONCURRENT_ITEMS;
  }

  /**
   * Before each Poll, its `block_ms`. With a free slot: a long poll. At capacity it waits for a slot, but
   * while an activation has been idle YIELD_MIN_IDLE_MS it looks once a second (a Poll that returns at
   * once) for Work that activation could make room for: `makeRoom` then asks it to end before the Ack.
   */
  private async nextPoll(): Promise<number> {
    for (;;) {
      if (!this.atCapacity || this.draining.signal.aborted) return POLL_BLOCK_MS;
      const now = Date.now();
      if (this.idle.pick(now, YIELD_MIN_IDLE_MS) && now - this.lastCapacityPoll >= CAPACITY_POLL_MS) {
        this.lastCapacityPoll = now;
        return 0;
      }
      await Promise.race([...this.running, sleep(CAPACITY_POLL_MS, this.draining.signal)]);
    }
  }

  /**
   * Between a Poll and its Ack, at capacity: the activation idle longest is asked to end (SIGTERM: its
   * runner drains, Stops its Work and exits; a Session that got input meanwhile is given new Work by that
   * Stop), and the Ack waits for its slot. Every slot busy again meanwhile: the Ack waits for the first
   * to free. Shutdown leaves the claim unacknowledged, to be reclaimed.
   */
  private async makeRoom(): Promise<boolean> {
    let asked = false;
    while (this.atCapacity) {
      if (this.draining.signal.aborted) return false;
      const workId = asked ? undefined : this.idle.pick(Date.now(), 0);
      if (workId) {
        asked = true;
        this.log.info(
          { work_id: workId, idle_ms: this.idle.idleFor(workId), slots: this.env.MANGO_MAX_CONCURRENT_ITEMS },
          'every slot is busy and Work is waiting: asking the Session activation idle longest to end',
        );
        this.idle.yielding(workId);
        await this.launcher.drain(workId);
      }
      await Promise.race([...this.running, sleep(250, this.draining.signal)]);
    }
    return true;
  }

  /**
   * One acknowledged item as a `mango.environment.work` span (CONSUMER), from the Ack to the container's
   * removal, in the trace the API put in the Work secret (the request whose input the item serves).
   * Attributes are ids and the outcome only: never the secret, a token or the item's output.
   */
  private runItem(item: AcknowledgedWork): Promise<void> {
    const { work } = item;
    return tracer().startActiveSpan(
      'mango.environment.work',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'mango.work.id': work.id,
          'mango.work.type': work.data.type,
          'mango.environment.id': work.environment_id,
          ...(work.data.type === 'session' ? { 'mango.session.id': work.data.id } : {}),
        },
      },
      contextFrom(workTraceparent(item.secret)),
      (span) =>
        this.runItemInSpan(item, trace.setSpan(context.active(), span), (outcome, exitCode) => {
          span.setAttribute('mango.outcome', outcome);
          if (exitCode !== undefined && exitCode !== null)
            span.setAttribute('mango.work.exit_code', exitCode);
          if (outcome === 'launch_error' || outcome === 'timeout' || outcome === 'exit_nonzero')
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        }).finally(() => span.end()),
    );
  }

  private async runItemInSpan(
    item: AcknowledgedWork,
    parent: Context,
    traced: (outcome: string, exitCode?: number | null) => void,
  ): Promise<void> {
    const { work, secret } = item;
    const log = this.log.child({ work_id: work.id, work_type: work.data.type });
    const started = Date.now();
    const workType = work.data.type;
    this.metrics.containerStarts.inc({ work_type: workType });
    const sessionId = work.data.type === 'session' ? work.data.id : undefined;
    let sessionDeleted = false;
    let egress: ActivationEgress | undefined;
    try {
      egress = await this.egress.forActivation(item, log);
      const outcome = await this.launcher.launch({
        egress: egress?.options,
        workId: work.id,
        environmentId: work.environment_id,
        workType: work.data.type,
        sessionId: work.data.type === 'session' ? work.data.id : undefined,
        secret,
        deadlineMs: work.data.type === 'healthcheck' ? HEALTHCHECK_CONTAINER_BOUND_MS : 24 * 3600_000,
        signal: AbortSignal.any([
          AbortSignal.timeout(
            work.data.type === 'healthcheck' ? HEALTHCHECK_CONTAINER_BOUND_MS : 24 * 3600_000,
          ),
          this.hardStop.signal,
        ]),
        onOutput: (line) => {
          sessionDeleted ||= sessionId !== undefined && reportsDeletion(line, sessionId);
          if (sessionId) this.idle.observe(work.id, sessionId, line);
          this.toolReported(line, { since: started, sessionId, workId: work.id, parent });
          log.info({ item: line.slice(0, 2000) }, 'item output');
        },
      });
      log.info({ ...outcome, ms: Date.now() - started }, 'item container finished and was removed');
      if (workType === 'session' && !outcome.cancelled && !outcome.timedOut && (outcome.exitCode ?? 0) >= 128)
        await this.stopKilledItem(item, outcome.exitCode!, log);
      if (sessionDeleted) await this.collectWorkspace(sessionId!, log);
      // A cancelled item (drain, Stop) is not a failure; a timeout or a non-zero exit is.
      if (outcome.timedOut) this.metrics.containerFailures.inc({ work_type: workType, reason: 'timeout' });
      else if (!outcome.cancelled && outcome.exitCode !== 0)
        this.metrics.containerFailures.inc({ work_type: workType, reason: 'exit_nonzero' });
      traced(
        outcome.timedOut
          ? 'timeout'
          : outcome.cancelled
            ? 'cancelled'
            : outcome.exitCode !== 0
              ? 'exit_nonzero'
              : 'ok',
        outcome.exitCode,
      );
    } catch (err) {
      traced('launch_error');
      this.metrics.containerFailures.inc({ work_type: workType, reason: 'launch_error' });
      // A launch failure before the first heartbeat leaves a bounded, reclaimable item: never a fake result.
      log.error({ err: String(err) }, 'item launch failed; the lease will expire and the item be reclaimed');
    } finally {
      await egress?.done(); // the activation's last egress records
    }
  }

  /**
   * A tool execution the item runner reported (ADR 0018): a `mango.tool_use <name>` span under the item's
   * `mango.environment.work` span (`parent`; none for an adopted container) and a
   * `mango_tool_execution_duration_seconds` observation. The report comes from inside the sandbox, so it
   * is validated (`parseToolReport`: known tool names only, bounded ids) and its timing is clamped into
   * this item's window; it carries no input or output, and neither does the span.
   */
  private toolReported(
    line: string,
    item: { since: number; sessionId?: string; workId: string; parent?: Context },
  ): void {
    const report = parseToolReport(line, this.customToolNames);
    if (!report) return;
    const { start, end } = toolReportWindow(report, item.since, Date.now());
    this.metrics.toolExecutionDuration.observe(
      { tool: report.tool, kind: report.tool_kind, outcome: report.outcome },
      (end - start) / 1000,
    );
    if (!item.parent) return;
    recordSpan(`mango.tool_use ${report.tool}`, {
      parent: item.parent,
      startTime: start,
      endTime: end,
      error: report.outcome === 'error',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': report.tool,
        'gen_ai.tool.call.id': report.tool_use_id,
        'mango.session.id': item.sessionId,
        'mango.work.id': item.workId,
        'mango.tool.kind': report.tool_kind,
        'mango.outcome': report.outcome,
        ...(report.outcome === 'error' ? { 'error.type': 'tool_error' } : {}),
      },
    });
  }

  /**
   * The item's container was killed by a signal (docker kill, the OOM killer: exit status 128 + signal)
   * before its runner could Stop its Work. Its runner can post nothing any more, so the Work is
   * force-stopped with its own token: a running Session gets its next activation now (which answers the
   * call in flight by running it again) instead of after the lease TTL. A runner that exits on its own
   * (0, or 75 to leave its lease to expire) is left alone; a lost lease answers 401 and is ignored.
   */
  private async stopKilledItem(item: AcknowledgedWork, exitCode: number, log: Logger): Promise<void> {
    const client = new MangoClient({
      baseUrl: this.env.MANGO_BASE_URL,
      apiKey: decodeWorkSecret(item.secret).sessions_token,
      maxRetries: 0,
      timeoutMs: 15_000,
    });
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await client.environments.work.stop(item.work.environment_id, item.work.id, { force: true });
        log.warn(
          { exit_code: exitCode },
          'item container was killed mid-activation: its Work was stopped so the Session is activated again',
        );
        return;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status !== undefined && !isRetryableStatus(status)) {
          log.warn(
            { exit_code: exitCode, status },
            'item container was killed; its Work was already stopped or reclaimed',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      }
    }
    log.warn(
      { exit_code: exitCode },
      'item container was killed; could not stop its Work (the lease will expire)',
    );
  }

  /**
   * The activation ended because its Session was deleted (its runner saw `session.deleted`): the Session's
   * workspace (volume or workspace-root directory) is removed now that its container is gone (ADR 0013).
   */
  private async collectWorkspace(sessionId: string, log: Logger): Promise<void> {
    const docker = createDockerClient(this.env.DOCKER_HOST);
    for (const ws of await sessionWorkspacesOf(docker, sessionId, this.env.MANGO_WORKER_WORKSPACE_ROOT)) {
      if (ws.inUse) continue;
      await removeSessionWorkspace(docker, ws).then(
        () => log.info({ session_id: sessionId, workspace: ws.name }, 'Session deleted: workspace removed'),
        (err: unknown) =>
          log.warn(
            { session_id: sessionId, workspace: ws.name, err: String(err) },
            'could not remove the workspace of a deleted Session',
          ),
      );
    }
  }

  private async checkEngine(docker: Docker): Promise<void> {
    const up = await docker.ping().then(
      () => true,
      () => false,
    );
    if (up !== this.engineUp) {
      this.log[up ? 'info' : 'error'](
        { docker_host: this.env.DOCKER_HOST ?? 'default' },
        up ? 'docker engine reachable again' : 'docker engine unreachable',
      );
    }
    this.engineUp = up;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.watch) clearInterval(this.watch);
    if (this.runnerInUse) clearInterval(this.runnerInUse);
    this.draining.abort();
    await this.loop;
    await this.launcher?.closePool();
    if (this.running.size) {
      // Items finish the call in flight, deliver its result and Stop (their lease stays renewable meanwhile).
      const signalled = await this.launcher.drainAll();
      this.log.info({ items: this.running.size, signalled }, 'draining: waiting for running items to finish');
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<'grace'>((r) => (timer = setTimeout(() => r('grace'), SHUTDOWN_GRACE_MS)));
      const outcome = await Promise.race([Promise.all(this.running), grace]);
      clearTimeout(timer);
      if (outcome === 'grace') {
        this.log.warn({ items: this.running.size }, 'shutdown grace over: killing the remaining items');
        this.hardStop.abort();
        await Promise.all(this.running);
      }
    }
  }
}

/**
 * The item runner's own end-of-activation line (libs/worker-runtime session-item.ts) naming this Session
 * and the reason `deleted`. Only this Session's workspace is ever collected on it — which the sandbox can
 * already erase itself — so a forged line gains a sandbox nothing.
 */
function reportsDeletion(line: string, sessionId: string): boolean {
  if (!line.includes('session activation ended')) return false;
  try {
    const o = JSON.parse(line) as { msg?: unknown; reason?: unknown; session_id?: unknown };
    return o.msg === 'session activation ended' && o.reason === 'deleted' && o.session_id === sessionId;
  } catch {
    return false;
  }
}
