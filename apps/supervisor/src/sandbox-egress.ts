import {
  controlPlaneOf,
  type EgressProxyOptions,
  type EgressRecord,
  parseEgressHostPins,
  pinnedResolver,
} from '@mango/adapter-docker';
import {
  type ControlPlane,
  type EgressTarget,
  parseSandboxNetworking,
  type SandboxNetworking,
} from '@mango/domain-egress';
import { type AllowEntry, parseAllowEntries } from '@mango/domain-kernel';
import type { MangoMetrics } from '@mango/platform-metrics';
import type { Resolver } from '@mango/platform-egress';
import { decodeWorkSecret, MangoClient } from '@mango/sdk';
import type { AcknowledgedWork } from '@mango/worker-runtime';
import type { Logger } from 'pino';
import type { SupervisorEnv } from './supervisor.env';

/**
 * The supervisor's side of sandbox egress (ADR 0021): the operator's settings, read once at start (a bad
 * one stops the supervisor), and for each Session activation the Environment's `config.networking`, read
 * then — so a change applies to the next activation. Every connection the proxy judged is counted and
 * logged with the Session (`sandbox egress`: host, port, bytes each way, allowed or the refusing rule).
 */
export class SandboxEgress {
  private allowedAddresses: AllowEntry[] = [];
  private resolve!: Resolver;
  private controlPlane: ControlPlane = { addresses: [], port: 0 };
  private readonly client: MangoClient;

  constructor(
    private readonly env: SupervisorEnv,
    private readonly log: Logger,
    private readonly metrics: MangoMetrics,
  ) {
    this.client = new MangoClient({
      baseUrl: env.MANGO_BASE_URL,
      apiKey: env.MANGO_ENVIRONMENT_KEY,
      timeoutMs: 15_000,
    });
  }

  /** Validates the operator settings (throws naming the bad one) and finds where the control plane listens. */
  async start(): Promise<void> {
    try {
      this.allowedAddresses = parseAllowEntries(this.env.MANGO_WORKER_EGRESS_ALLOWED_ADDRESSES);
    } catch (err) {
      throw new Error(`MANGO_WORKER_EGRESS_ALLOWED_ADDRESSES: ${(err as Error).message}`);
    }
    this.resolve = pinnedResolver(parseEgressHostPins(this.env.MANGO_WORKER_EGRESS_HOSTS));
    this.controlPlane = await controlPlaneOf(this.env.MANGO_BASE_URL);
    if (this.controlPlane.addresses.length === 0)
      this.log.warn(
        { base_url: this.env.MANGO_BASE_URL },
        'could not resolve MANGO_BASE_URL: the egress proxy cannot tell the control plane by its address',
      );
  }

  /**
   * The egress proxy for one Session activation, or undefined for none: a sandbox network other than
   * `none` (the operator's choice applies), no `networking` on the Environment, or a failed read (fail
   * closed: this activation has no egress, and the supervisor says so).
   */
  async forActivation(item: AcknowledgedWork, log: Logger): Promise<ActivationEgress | undefined> {
    if (this.env.MANGO_WORKER_NETWORK !== 'none' || item.work.data.type !== 'session') return undefined;
    const sessionId = item.work.data.id;
    let networking: SandboxNetworking | null;
    try {
      const environment = await this.client.environments.retrieve(this.env.MANGO_ENVIRONMENT_ID);
      const raw = (environment.config as { networking?: unknown }).networking;
      // The answer is input too: the same parser as the API's.
      networking = raw === undefined || raw === null ? null : parseSandboxNetworking(raw);
    } catch (err) {
      log.warn(
        { err: String(err) },
        "could not read the Environment's network policy: this activation has no egress",
      );
      return undefined;
    }
    if (!networking) return undefined;
    const mcpServers =
      networking.type === 'limited' && networking.allow_mcp_servers
        ? await this.mcpServersOf(item, sessionId, log)
        : [];
    const reporter = new EgressReporter(this.client, item.work.environment_id, item.work.id, log);
    return {
      options: {
        context: {
          networking,
          unrestrictedEnabled: this.env.MANGO_WORKER_EGRESS_UNRESTRICTED === 'true',
          mcpServers,
          allowedAddresses: this.allowedAddresses,
          controlPlane: this.controlPlane,
        },
        resolve: this.resolve,
        onRecord: (r) => {
          this.recorded(r, sessionId, log);
          reporter.add(r);
        },
      },
      done: () => reporter.close(),
    };
  }

  /** The hosts and ports of the Session's Agent's MCP servers (read with the item's own Work token). */
  private async mcpServersOf(
    item: AcknowledgedWork,
    sessionId: string,
    log: Logger,
  ): Promise<EgressTarget[]> {
    try {
      const session = await this.client
        .withToken(decodeWorkSecret(item.secret).sessions_token)
        .sessions.retrieve(sessionId);
      const servers = (session.agent as { mcp_servers?: Array<{ url?: string }> }).mcp_servers ?? [];
      return servers.flatMap((s) => {
        try {
          const url = new URL(String(s.url));
          return [
            { host: url.hostname, port: url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443 },
          ];
        } catch {
          return [];
        }
      });
    } catch (err) {
      log.warn({ err: String(err) }, "could not read the Session's MCP servers: allow_mcp_servers adds none");
      return [];
    }
  }

  private recorded(r: EgressRecord, sessionId: string, log: Logger): void {
    this.metrics.sandboxEgressConnections.inc({
      verdict: r.allowed ? 'allowed' : 'refused',
      rule: r.rule ?? r.failure ?? 'none',
    });
    this.metrics.sandboxEgressBytes.inc({ direction: 'out' }, r.bytesOut);
    this.metrics.sandboxEgressBytes.inc({ direction: 'in' }, r.bytesIn);
    log.info(
      {
        session_id: sessionId,
        egress: {
          kind: r.kind,
          host: r.host.slice(0, 255),
          port: r.port,
          allowed: r.allowed,
          ...(r.rule ? { rule: r.rule } : {}),
          ...(r.failure ? { failure: r.failure } : {}),
          bytes_out: r.bytesOut,
          bytes_in: r.bytesIn,
        },
      },
      'sandbox egress',
    );
  }
}

/** One activation's egress: the proxy's options, and `done` once the container is gone (the last records). */
export interface ActivationEgress {
  options: EgressProxyOptions;
  done(): Promise<void>;
}

/** Records sent at once when this many wait; otherwise within REPORT_EVERY_MS. */
const REPORT_BATCH = 50;
const REPORT_EVERY_MS = 2_000;
/** Records kept while the API does not answer; more are dropped (and the drop logged once). */
const REPORT_BUFFER = 1_000;

/**
 * Reports an activation's egress records to the API (`POST …/work/{id}/egress_records`, the Environment
 * key) in batches, so the Session's records are readable with `GET /v1/sessions/{id}/egress_records`.
 * Best effort and bounded: the log line and the metrics are the record of last resort.
 */
class EgressReporter {
  private queue: EgressRecord[] = [];
  private timer?: NodeJS.Timeout;
  private sending: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(
    private readonly client: MangoClient,
    private readonly environmentId: string,
    private readonly workId: string,
    private readonly log: Logger,
  ) {}

  add(r: EgressRecord): void {
    if (this.queue.length >= REPORT_BUFFER) {
      if (this.dropped++ === 0)
        this.log.warn(
          {},
          'egress records are not being accepted fast enough: dropping some (the log keeps them)',
        );
      return;
    }
    this.queue.push(r);
    if (this.queue.length >= REPORT_BATCH) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), REPORT_EVERY_MS);
  }

  async close(): Promise<void> {
    this.flush();
    await this.sending;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length) {
      const batch = this.queue.splice(0, REPORT_BATCH);
      this.sending = this.sending.then(() => this.send(batch));
    }
  }

  private async send(batch: EgressRecord[]): Promise<void> {
    try {
      await this.client.environments.work.egressRecords.create(this.environmentId, this.workId, {
        records: batch.map((r) => ({
          kind: r.kind,
          host: r.host.slice(0, 255),
          port: r.port,
          allowed: r.allowed,
          rule: r.rule ?? null,
          failure: r.failure ?? null,
          bytes_out: r.bytesOut,
          bytes_in: r.bytesIn,
        })),
      });
    } catch (err) {
      this.log.warn(
        { err: String(err), records: batch.length },
        'could not report egress records (the log keeps them)',
      );
    }
  }
}
