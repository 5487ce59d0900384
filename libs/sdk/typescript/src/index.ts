export { MangoClient } from './client';
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  SDK_VERSION,
  type MangoClientOptions,
  type RequestOptions,
} from './core';
export * from './errors';
export { PagePromise } from './pagination';
export type { AgentVersions, Agents } from './resources/agents';
export type { Environments } from './resources/environments';
export type { Health } from './resources/health';
export type { Memories, MemoryStores, MemoryVersions } from './resources/memory-stores';
export type { SessionEvents, Sessions } from './resources/sessions';
export type { EnvironmentWork } from './resources/work';
export type { VaultCredentials, Vaults } from './resources/vaults';
export * from './memory-types';
export * from './types';
export * from './vault-types';
export { decodeWorkSecret, encodeWorkSecret, InvalidWorkSecretError } from './work-secret';
export { InvalidWebhookSignatureError, unwrapWebhook } from './webhooks';
export type { WebhookEvent } from './webhooks';
