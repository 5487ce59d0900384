import { HttpClient, MangoClientOptions, resolveConfig } from './core';
import { Agents } from './resources/agents';
import { Environments } from './resources/environments';
import { Health } from './resources/health';
import { MemoryStores } from './resources/memory-stores';
import { Sessions } from './resources/sessions';
import { Vaults } from './resources/vaults';

/**
 * Typed client for Mango's `/v1` API.
 *
 * ```ts
 * const mango = new MangoClient({ baseUrl: 'http://localhost:8080', apiKey: 'mango_ak_…' });
 * const agent = await mango.agents.create({ name: 'triage', model: 'claude-sonnet-4-5' });
 * for await (const a of mango.agents.list({ limit: 50 })) console.log(a.id);
 * ```
 *
 * Every call sends `Authorization: Bearer <apiKey>`, retries connection errors, timeouts, 408, 429 and
 * 5xx up to `maxRetries` times with jittered exponential backoff, and rejects with a typed `MangoError`.
 */
export class MangoClient {
  readonly agents: Agents;
  readonly environments: Environments;
  readonly health: Health;
  /** Memory Stores (served by apps/files behind the same base URL). */
  readonly memoryStores: MemoryStores;
  readonly sessions: Sessions;
  /** Vaults and their write-only MCP credentials. */
  readonly vaults: Vaults;

  private readonly options: Readonly<MangoClientOptions>;

  constructor(opts: MangoClientOptions) {
    const config = resolveConfig(opts);
    this.options = { ...opts };
    const http = new HttpClient(config);
    this.agents = new Agents(http);
    this.environments = new Environments(http);
    this.health = new Health(http);
    this.memoryStores = new MemoryStores(http);
    this.sessions = new Sessions(http);
    this.vaults = new Vaults(http);
  }

  /** The normalized base URL (no trailing slash). */
  get baseUrl(): string {
    return this.options.baseUrl.replace(/\/+$/, '');
  }

  /**
   * A client with the same settings bound to another credential — e.g. the Work token
   * (`sessions_token`) from a polled Work's secret, for Heartbeat, Result, Fail and Stop:
   *
   * ```ts
   * const { sessions_token, api_base_url } = decodeWorkSecret(work.secret);
   * const worker = envClient.withToken(sessions_token, { baseUrl: api_base_url });
   * ```
   */
  withToken(token: string, overrides: Omit<Partial<MangoClientOptions>, 'apiKey'> = {}): MangoClient {
    return new MangoClient({ ...this.options, ...overrides, apiKey: token });
  }
}
