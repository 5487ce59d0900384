import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  createDeploymentActivities,
  createProbeActivities,
  createSessionActivities,
  createWebhookActivities,
  McpRuntime,
} from '@mango/activities';
import { DeploymentScheduler } from '@mango/feature-deployments';
import { Client } from '@temporalio/client';
import { WebhookSender } from '@mango/adapter-webhooks';
import { parseCidrList } from '@mango/domain-webhooks';
import { McpConnector } from '@mango/adapter-mcp';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { OAuthRefresher } from '@mango/feature-vaults';
import { parseModelProfiles, parsePriceTable } from '@mango/domain-sessions';
import { ModelClient, resolveModelEndpoint } from '@mango/adapter-model';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { MangoMetrics } from '@mango/platform-metrics';
import { temporalActivityInterceptors, temporalWorkflowSinks } from '@mango/platform-tracing';
import {
  assertKeyringCoversStoredValues,
  SessionRepository,
  SessionWakes,
  VaultCredentialRepository,
} from '@mango/persistence';
import { keyringFromSettings } from '@mango/platform-secrets';
import { TemporalConnector } from '@mango/platform-temporal';
import { DataSource } from 'typeorm';
import { bundleWorkflowsInThread } from './workflow-bundle';
import { OrchestratorEnv } from './orchestrator.env';
import { ObjectStore, s3CredentialsFrom } from '@mango/adapter-object-store';
import { McpResultFileStore } from './mcp-result-files';

export const ORCHESTRATOR_ENV = Symbol('ORCHESTRATOR_ENV');
export const LOGGER = Symbol('LOGGER');
/** The process's TemporalConnector (@mango/platform-temporal): every Temporal connection is opened through it. */
export const TEMPORAL = Symbol('TEMPORAL');

/** Runs the Temporal worker for Mango's workflows and activities until the app shuts down. */
@Injectable()
export class TemporalWorkerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private worker?: Worker;
  private connection?: NativeConnection;
  private running?: Promise<void>;

  constructor(
    @Inject(ORCHESTRATOR_ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MangoMetrics) private readonly metrics: MangoMetrics,
    @Inject(SessionWakes) private readonly wakes: SessionWakes,
    @Inject(TEMPORAL) private readonly temporal: TemporalConnector,
  ) {
    // Read from PostgreSQL at scrape time: cluster-wide, the same on every replica (aggregate with max).
    metrics.gauge(
      'mango_session_turns_running',
      'Sessions whose turn is running now (cluster-wide; aggregate replicas with max).',
      [],
      async () => [{ value: await new SessionRepository(dataSource).countRunning() }],
    );
  }

  /** Large MCP results become Files when object storage is configured (the bucket of apps/files). */
  private mcpResultFiles(): McpResultFileStore | undefined {
    const env = this.env;
    if (!env.MANGO_S3_ENDPOINT) {
      this.log.info('no object storage (MANGO_S3_ENDPOINT): large MCP results are cut at the inline bound');
      return undefined;
    }
    const store = new ObjectStore({
      endpoint: env.MANGO_S3_ENDPOINT,
      // Keys, or the default credential chain (web identity, container, instance profile).
      ...s3CredentialsFrom(env),
      region: env.MANGO_S3_REGION,
      bucket: env.MANGO_S3_BUCKET,
    });
    return new McpResultFileStore(this.dataSource, store);
  }

  async onApplicationBootstrap(): Promise<void> {
    installRuntimeLogger(this.log);
    // Model profiles and prices are validated first: a bad one stops the orchestrator with its message.
    const profiles = parseModelProfiles(this.env.MANGO_MODEL_PROFILES);
    const prices = parsePriceTable(this.env.MANGO_MODEL_PRICES);
    // MCP calls open Vault credentials and deliveries open signing secrets: refuse to start when stored
    // secrets need a key the keyring lacks (as apps/api does).
    const keyring = keyringFromSettings(this.env);
    await assertKeyringCoversStoredValues(this.dataSource, keyring);
    const allowlist = parseAddressAllowlist(this.env.MANGO_MCP_ALLOWED_ADDRESSES);
    if (allowlist.entries.length)
      this.log.warn({ allowed: allowlist.entries }, 'MCP servers at these non-public addresses are allowed');
    const credentials = new VaultCredentialRepository(this.dataSource);
    const mcp = new McpRuntime({
      dataSource: this.dataSource,
      keyring,
      credentials,
      refresher: keyring ? new OAuthRefresher({ credentials, keyring, allowlist }) : undefined,
      connector: new McpConnector({
        allowlist,
        timeoutMs: this.env.MANGO_MCP_TIMEOUT_MS,
        maxResponseBytes: this.env.MANGO_MCP_MAX_RESPONSE_BYTES,
      }),
      resultFiles: this.mcpResultFiles(),
      metrics: this.metrics,
    });
    this.connection = await this.temporal.connectNative(NativeConnection);
    const endpoint = resolveModelEndpoint(this.env);
    this.log[endpoint.usable ? 'info' : 'warn'](
      { model_endpoint: endpoint.described },
      endpoint.usable ? 'model endpoint' : `model endpoint unusable: ${endpoint.reason}`,
    );
    this.worker = await Worker.create({
      connection: this.connection,
      namespace: this.temporal.namespace,
      taskQueue: this.env.MANGO_TASK_QUEUE,
      // A prebuilt bundle, or one bundled now in a worker thread (webpack's memory leaves with it).
      workflowBundle: this.env.MANGO_WORKFLOW_BUNDLE
        ? { codePath: this.env.MANGO_WORKFLOW_BUNDLE }
        : { code: await bundleWorkflowsInThread() },
      // OpenTelemetry (Temporal's interceptors): the workflow interceptors are compiled into every bundle
      // and their spans reach the exporter through the sink (traced calls only, see
      // libs/platform/tracing/src/workflow-interceptors.ts); activity spans only with tracing.
      interceptors: { activity: temporalActivityInterceptors() },
      sinks: temporalWorkflowSinks(),
      // Bounded concurrency with backpressure: a step beyond these slots stays in the task queue (no
      // schedule-to-start timeout), where this or another orchestrator picks it up when a slot frees.
      maxConcurrentActivityTaskExecutions: this.env.MANGO_MAX_CONCURRENT_TURNS,
      // Idle Sessions' workflows beyond this are evicted and replayed at their next event (bounded memory).
      maxCachedWorkflows: this.env.MANGO_MAX_CACHED_WORKFLOWS,
      maxConcurrentLocalActivityExecutions: dbSteps(this.env),
      activities: {
        ...createProbeActivities({ dataSource: this.dataSource }),
        ...createDeploymentActivities({
          dataSource: this.dataSource,
          prices,
          metrics: this.metrics,
          runningSessionsPerWorkspace:
            this.env.MANGO_FAIR_USE === 'on' ? this.env.MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE : null,
          // Auto-pause also pauses the Deployment's Temporal Schedule.
          scheduler: new DeploymentScheduler(
            new Client({ connection: this.temporal.lazyClient(), namespace: this.temporal.namespace }),
            this.env.MANGO_TASK_QUEUE,
          ),
        }),
        ...createWebhookActivities({
          dataSource: this.dataSource,
          sender: new WebhookSender({
            allow: parseCidrList(this.env.MANGO_WEBHOOK_ALLOWED_CIDRS),
            timeoutMs: this.env.MANGO_WEBHOOK_TIMEOUT_MS,
          }),
          keyring,
        }),
        ...createSessionActivities({
          dataSource: this.dataSource,
          compactAtTokens: this.env.MANGO_COMPACT_AT_TOKENS,
          autoJudge: { timeoutMs: this.env.MANGO_AUTO_PERMISSION_TIMEOUT_MS },
          profiles,
          metrics: this.metrics,
          mcp,
          prices,
          // A step waits this long for its tool results and then runs the next step itself (ADR 0019).
          toolResultWait: { ms: this.env.MANGO_TOOL_RESULT_WAIT_MS, wakes: this.wakes },
          model: endpoint.usable
            ? new ModelClient({
                baseUrl: endpoint.baseUrl,
                apiKey: endpoint.apiKey,
                timeoutMs: this.env.MANGO_MODEL_TIMEOUT_MS,
                idleTimeoutMs: this.env.MANGO_MODEL_IDLE_TIMEOUT_MS,
                maxResponseBytes: this.env.MANGO_MODEL_MAX_RESPONSE_BYTES,
              })
            : { unavailable: endpoint.reason },
        }),
      },
    });
    this.running = this.worker.run().catch((err: unknown) => {
      this.log.fatal({ err }, 'temporal worker stopped');
      process.exit(1);
    });
    this.log.info(
      { taskQueue: this.env.MANGO_TASK_QUEUE, temporal: this.temporal.describe() },
      'temporal worker running',
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    if (this.connection) this.temporal.release(this.connection);
    await this.connection?.close();
  }
}

/** Local activities at once: each holds one pool connection; one connection stays for the outbox relay. */
export function dbSteps(env: OrchestratorEnv): number {
  return env.MANGO_MAX_CONCURRENT_DB_STEPS ?? Math.max(1, env.MANGO_DB_POOL_SIZE - 1);
}

let runtimeInstalled = false;

/** Sends the Temporal SDK's own log lines (bundler, core) into pino as JSON, warnings and above. */
function installRuntimeLogger(log: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) =>
      log[levels[entry.level]]({ temporal: entry.meta }, entry.message),
    ),
  });
}
