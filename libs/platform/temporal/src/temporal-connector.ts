import { Connection, type ConnectionOptions } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { ConfigError } from '@mango/platform-config';
import { readTemporalCredentials, TemporalCredentials } from './temporal-credentials';
import { describeTemporalConnection, TemporalSettings } from './temporal-settings';

/** A connection whose API key can be replaced while it is open (`NativeConnection` from `@temporalio/worker`). */
interface ApiKeyHolder {
  setApiKey(apiKey: string): Promise<void>;
}

/** What one look at the credential files found. */
export type CredentialsCheck = 'unchanged' | 'api_key_rotated' | 'certificates_rotated' | 'unreadable';

export interface TemporalConnectorHooks {
  /**
   * The CA, client certificate or key files changed (and the new set is valid). Neither SDK can change
   * the TLS of an open connection: the app restarts (see `stopForNewCertificates`).
   */
  certificatesRotated(): void;
  /** A check found the files unreadable or inconsistent (mid-rotation): the connections keep the old ones. */
  checkFailed(problems: string[]): void;
  /** The API key file changed; every connection now sends the new key. */
  apiKeyRotated?(): void;
}

/**
 * The one way Mango's processes connect to Temporal: the settings (`withTemporalEnv`) turned into the
 * options of `@temporalio/client`'s Connection and `@temporalio/worker`'s NativeConnection — address, TLS
 * (server CA, server name, mTLS client certificate) and API key — and a check of the files for rotation.
 * A rotated API key is sent from the next request on (client connections read it per call; native
 * connections get `setApiKey`). Secrets never leave the options: `describe()` is what logs may say.
 */
export class TemporalConnector {
  private timer?: NodeJS.Timeout;
  private readonly natives = new Set<ApiKeyHolder>();
  private checking = false;

  private constructor(
    private readonly settings: TemporalSettings,
    private current: TemporalCredentials,
    private readonly hooks: TemporalConnectorHooks,
  ) {}

  /** Reads the files the settings name; their problems (all of them) in a ConfigError. */
  static fromSettings(settings: TemporalSettings, hooks: TemporalConnectorHooks): TemporalConnector {
    const read = readTemporalCredentials(settings);
    if (!read.ok) throw new ConfigError(read.problems);
    return new TemporalConnector(settings, read.credentials, hooks);
  }

  get namespace(): string {
    return this.settings.MANGO_TEMPORAL_NAMESPACE;
  }

  /** Where and how it connects, for logs: never a key or a file's contents. */
  describe() {
    return describeTemporalConnection(this.settings);
  }

  /** Options of `@temporalio/client`'s Connection (the API key read at each call, so a rotation applies at once). */
  clientOptions(): ConnectionOptions {
    return {
      address: this.address(),
      tls: this.current.tls,
      ...(this.current.apiKey !== undefined ? { apiKey: () => this.current.apiKey! } : {}),
    };
  }

  /** Options of `@temporalio/worker`'s NativeConnection. */
  nativeOptions(): NativeConnectionOptions {
    return {
      address: this.address(),
      tls: this.current.tls,
      ...(this.current.apiKey !== undefined ? { apiKey: this.current.apiKey } : {}),
    };
  }

  connectClient(): Promise<Connection> {
    return Connection.connect(this.clientOptions());
  }

  /** A client connection that connects at its first call. */
  lazyClient(): Connection {
    return Connection.lazy(this.clientOptions());
  }

  /**
   * Opens a NativeConnection (the class is passed in, so processes without a worker never load the
   * native module) and keeps its API key current until `release`.
   */
  async connectNative<C extends ApiKeyHolder>(native: {
    connect(options: NativeConnectionOptions): Promise<C>;
  }): Promise<C> {
    const connection = await native.connect(this.nativeOptions());
    this.natives.add(connection);
    return connection;
  }

  /** Stops updating a native connection's API key (call before closing it). */
  release(connection: ApiKeyHolder): void {
    this.natives.delete(connection);
  }

  /** Checks the files every MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS (none when 0). */
  start(): void {
    const seconds = this.settings.MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS;
    if (seconds === 0 || this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => undefined), seconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at the files: a new API key is applied; new certificates are reported once. */
  async check(): Promise<CredentialsCheck> {
    if (this.checking) return 'unchanged';
    this.checking = true;
    try {
      const read = readTemporalCredentials(this.settings);
      if (!read.ok) {
        this.hooks.checkFailed(read.problems);
        return 'unreadable';
      }
      const next = read.credentials;
      if (next.certificatesDigest !== this.current.certificatesDigest) {
        // Reported once: the process is about to restart with them.
        this.stop();
        this.hooks.certificatesRotated();
        return 'certificates_rotated';
      }
      if (next.apiKey !== this.current.apiKey && next.apiKey !== undefined) {
        this.current = { ...this.current, apiKey: next.apiKey };
        await Promise.all([...this.natives].map((c) => c.setApiKey(next.apiKey!)));
        this.hooks.apiKeyRotated?.();
        return 'api_key_rotated';
      }
      return 'unchanged';
    } finally {
      this.checking = false;
    }
  }

  private address(): string {
    if (!this.settings.MANGO_TEMPORAL_ADDRESS) throw new Error('MANGO_TEMPORAL_ADDRESS is not set');
    return this.settings.MANGO_TEMPORAL_ADDRESS;
  }
}

/**
 * The hooks every app uses: a certificate rotation stops the process gracefully (SIGTERM, the same path
 * as a platform's stop: the worker drains, runMain exits) so its supervisor (Kubernetes, Compose's
 * `restart:`) starts it again with the new files; an unreadable check is logged and retried.
 */
export function restartOnCertificateRotation(log: {
  warn(obj: object, msg: string): void;
  info(msg: string): void;
}): TemporalConnectorHooks {
  return {
    certificatesRotated: () => {
      log.warn(
        {},
        'Temporal TLS certificate files changed: stopping so that the process restarts with them (an open connection cannot change its TLS)',
      );
      process.kill(process.pid, 'SIGTERM');
    },
    checkFailed: (problems) =>
      log.warn(
        { problems },
        'Temporal credential files unreadable or inconsistent; keeping the current ones',
      ),
    apiKeyRotated: () => log.info('Temporal API key file changed: the new key is used from now on'),
  };
}
