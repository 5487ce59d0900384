import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createProbeActivities, createSessionActivities, McpRuntime } from '@mango/activities';
import { McpConnector } from '@mango/adapter-mcp';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { assertKeyringCoversCredentials, OAuthRefresher, vaultKeyringFrom } from '@mango/feature-vaults';
import { parsePriceTable } from '@mango/domain-sessions';
import { ModelClient } from '@mango/adapter-model';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { workflowBundlerOptions, WORKFLOWS_PATH } from './workflow-bundle';
import { OrchestratorEnv } from './orchestrator.env';

export const ORCHESTRATOR_ENV = Symbol('ORCHESTRATOR_ENV');
export const LOGGER = Symbol('LOGGER');

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
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    installRuntimeLogger(this.log);
    // MCP calls open Vault credentials: refuse to start when they could not be opened (as apps/api does).
    const keyring = vaultKeyringFrom(this.env.MANGO_VAULT_KEYRING);
    await assertKeyringCoversCredentials(this.dataSource, keyring);
    const allowlist = parseAddressAllowlist(this.env.MANGO_MCP_ALLOWED_ADDRESSES);
    if (allowlist.entries.length)
      this.log.warn({ allowed: allowlist.entries }, 'MCP servers at these non-public addresses are allowed');
    const mcp = new McpRuntime({
      dataSource: this.dataSource,
      keyring,
      refresher: keyring
        ? new OAuthRefresher({ dataSource: this.dataSource, keyring, allowlist })
        : undefined,
      connector: new McpConnector({ allowlist, timeoutMs: this.env.MANGO_MCP_TIMEOUT_MS }),
    });
    this.connection = await NativeConnection.connect({ address: this.env.MANGO_TEMPORAL_ADDRESS });
    this.worker = await Worker.create({
      connection: this.connection,
      namespace: this.env.MANGO_TEMPORAL_NAMESPACE,
      taskQueue: this.env.MANGO_TASK_QUEUE,
      workflowsPath: WORKFLOWS_PATH,
      bundlerOptions: workflowBundlerOptions(),
      activities: {
        ...createProbeActivities({ dataSource: this.dataSource }),
        ...createSessionActivities({
          dataSource: this.dataSource,
          compactAtTokens: this.env.MANGO_COMPACT_AT_TOKENS,
          mcp,
          prices: parsePriceTable(this.env.MANGO_MODEL_PRICES),
          model: this.env.MANGO_MODEL_BASE_URL
            ? new ModelClient({
                baseUrl: this.env.MANGO_MODEL_BASE_URL,
                apiKey: this.env.MANGO_MODEL_API_KEY ?? '',
              })
            : null,
        }),
      },
    });
    this.running = this.worker.run().catch((err: unknown) => {
      this.log.fatal({ err }, 'temporal worker stopped');
      process.exit(1);
    });
    this.log.info(
      { taskQueue: this.env.MANGO_TASK_QUEUE, namespace: this.env.MANGO_TEMPORAL_NAMESPACE },
      'temporal worker running',
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    await this.connection?.close();
  }
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
