import { HttpClient, MangoClientOptions, resolveConfig } from './core';
import { GeneratedResources } from './generated/resources';
import { Merged, mergeResources } from './resource';
import { Agents } from './resources/agents';
import { Environments } from './resources/environments';
import { Health } from './resources/health';
import { MemoryStores } from './resources/memory-stores';
import { Sessions } from './resources/sessions';
import { Vaults } from './resources/vaults';

/** The hand-written resources (precise types and extra behaviour such as `poll` → `null`). */
interface HandWrittenResources {
  readonly agents: Agents;
  readonly environments: Environments;
  readonly health: Health;
  /** Memory Stores (served by apps/files behind the same base URL). */
  readonly memoryStores: MemoryStores;
  readonly sessions: Sessions;
  /** Vaults and their write-only MCP credentials. */
  readonly vaults: Vaults;
}

/** Every operation of openapi.yaml, grouped by its operationId (`environments.work.poll`). */
export type MangoResources = Merged<HandWrittenResources, GeneratedResources>;

// eslint-disable-next-line @typescript-eslint/no-empty-interface, @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface MangoClient extends MangoResources {}

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
 *
 * Resources are generated from openapi.yaml (`src/generated/resources.ts`), so every operation is a
 * method: `client.files.upload({ file })`, `client.sessions.threads.list(id)`,
 * `client.environments.work.poll(envId)`. The hand-written classes in `src/resources/` refine some of them.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MangoClient {
  private readonly options: Readonly<MangoClientOptions>;

  constructor(opts: MangoClientOptions) {
    const config = resolveConfig(opts);
    this.options = { ...opts };
    const http = new HttpClient(config);
    const hand: HandWrittenResources = {
      agents: new Agents(http),
      environments: new Environments(http),
      health: new Health(http),
      memoryStores: new MemoryStores(http),
      sessions: new Sessions(http),
      vaults: new Vaults(http),
    };
    const resources = mergeResources(hand, new GeneratedResources(http));
    for (const [key, value] of Object.entries(resources)) {
      Object.defineProperty(this, key, { value, enumerable: true, writable: false });
    }
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
