import { DynamicModule, Module } from '@nestjs/common';
import { AgentsModule } from '@mango/feature-agents';
import { ObjectStore, s3CredentialsFrom } from '@mango/adapter-object-store';
import { AuthModule, fairUseSettingsFrom, FairUseModule } from '@mango/feature-auth';
import { AuditModule, auditSettingsFrom } from '@mango/feature-audit';
import { IdempotencyModule } from '@mango/feature-idempotency';
import { EnvironmentsModule } from '@mango/feature-environments';
import { SandboxEgressModule } from '@mango/feature-sandbox-egress';
import { FileTextAdmissionModule } from '@mango/feature-files';
import { MODEL_PRICES, SESSION_SERVICE_LIMITS, SessionsModule } from '@mango/feature-sessions';
import { parsePriceTable } from '@mango/domain-sessions';
import { VaultsModule } from '@mango/feature-vaults';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { WorkModule } from '@mango/feature-work';
import { WebhooksModule } from '@mango/feature-webhooks';
import { DeploymentScheduler, DeploymentsModule } from '@mango/feature-deployments';
import { Client } from '@temporalio/client';
import { parseCidrList } from '@mango/domain-webhooks';
import { HealthController, resolvePublicBaseUrl } from '@mango/platform-http';
import { PersistenceModule } from '@mango/persistence';
import { MangoMetrics, MetricsModule } from '@mango/platform-metrics';
import type { Keyring } from '@mango/platform-secrets';
import type { TemporalConnector } from '@mango/platform-temporal';
import { ApiEnv } from './api.env';

@Module({})
export class AppModule {
  static forRoot(
    env: ApiEnv,
    metrics: MangoMetrics,
    keyring: Keyring | null,
    temporal: TemporalConnector | null,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        MetricsModule.forRoot(metrics),
        PersistenceModule.forRoot({
          url: env.MANGO_DATABASE_URL,
          poolSize: env.MANGO_DB_POOL_SIZE,
          applicationName: 'mango-api',
        }),
        AuthModule,
        // Request rates and stream slots per credential and per Workspace: an interceptor, after the auth guard.
        FairUseModule.forRoot(
          fairUseSettingsFrom(env, {
            workspace: env.MANGO_MAX_SSE_STREAMS_PER_WORKSPACE,
            credential: env.MANGO_MAX_SSE_STREAMS_PER_KEY,
          }),
        ),
        // Every write recorded in the audit log once its response finished (after the auth guard).
        AuditModule.forRoot({ ...auditSettingsFrom(env), serveApi: true }),
        // Idempotency-Key on every POST: an interceptor after the auth guard (keys are per Workspace) and after
        // fair use (a refused request uses no key).
        IdempotencyModule.forRoot({
          retentionMs: env.MANGO_IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
          pruneIntervalMs: env.MANGO_IDEMPOTENCY_PRUNE_SECONDS * 1_000,
          keyring,
        }),
        // First among the routes after /healthz: Express tries routes in registration order, and Poll and
        // Ack are the requests every supervisor repeats (no other route overlaps /v1/environments/:id/work).
        WorkModule.forRoot({
          publicBaseUrl: resolvePublicBaseUrl(env, { host: env.MANGO_API_HOST, port: env.MANGO_API_PORT }),
        }),
        AgentsModule,
        EnvironmentsModule,
        SandboxEgressModule,
        SessionsModule,
        modelPrices(env),
        sessionLimits(env),
        VaultsModule.forRoot({ keyring, allowlist: parseAddressAllowlist(env.MANGO_MCP_ALLOWED_ADDRESSES) }),
        webhooks(env, keyring),
        DeploymentsModule.forRoot({ scheduler: scheduler(env, temporal) }),
        // FILE_TEXT_READER (bounded UTF-8 text of a File) only when object storage is configured.
        ...(env.MANGO_S3_ENDPOINT ? [fileText(env)] : []),
      ],
      controllers: [HealthController],
    };
  }
}

function fileText(env: ApiEnv): DynamicModule {
  const store = new ObjectStore({
    endpoint: env.MANGO_S3_ENDPOINT!,
    // Keys, or the default credential chain (web identity, container, instance profile).
    ...s3CredentialsFrom(env),
    region: env.MANGO_S3_REGION,
    bucket: env.MANGO_S3_BUCKET,
  });
  return FileTextAdmissionModule.forRoot({ store, maxBytes: env.MANGO_FILES_TEXT_MAX_BYTES });
}

/** The Session limits (events per request, open streams per process, running Sessions per Workspace). */
function sessionLimits(env: ApiEnv): DynamicModule {
  return {
    module: class SessionLimitsModule {},
    global: true,
    providers: [
      {
        provide: SESSION_SERVICE_LIMITS,
        useValue: {
          eventsPerRequest: env.MANGO_MAX_EVENTS_PER_REQUEST,
          streams: env.MANGO_MAX_SSE_STREAMS,
          runningSessionsPerWorkspace:
            env.MANGO_FAIR_USE === 'on' ? env.MANGO_MAX_RUNNING_SESSIONS_PER_WORKSPACE : null,
        },
      },
    ],
    exports: [SESSION_SERVICE_LIMITS],
  };
}

/** `MANGO_MODEL_PRICES` for budget checks, parsed at boot (a bad table stops the app with its message). */
function modelPrices(env: ApiEnv): DynamicModule {
  const table = parsePriceTable(env.MANGO_MODEL_PRICES);
  return {
    module: class ModelPricesModule {},
    global: true,
    providers: [{ provide: MODEL_PRICES, useValue: table }],
    exports: [MODEL_PRICES],
  };
}

/** Webhook endpoints; a malformed allowlist stops the app at boot with its message. */
function webhooks(env: ApiEnv, keyring: Keyring | null): DynamicModule {
  const allow = (() => {
    try {
      return parseCidrList(env.MANGO_WEBHOOK_ALLOWED_CIDRS);
    } catch (e) {
      throw new Error(`MANGO_WEBHOOK_ALLOWED_CIDRS: ${(e as Error).message}`);
    }
  })();
  return WebhooksModule.forRoot({ allow, keyring });
}

/** Temporal Schedules for cron Deployments when the API knows Temporal (connected lazily); else manual only. */
function scheduler(env: ApiEnv, temporal: TemporalConnector | null): DeploymentScheduler | null {
  if (!temporal) return null;
  return new DeploymentScheduler(
    new Client({ connection: temporal.lazyClient(), namespace: temporal.namespace }),
    env.MANGO_TASK_QUEUE,
  );
}
