export { MangoClient } from './client';
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  IDEMPOTENCY_KEY_HEADER,
  isIdempotencyInProgress,
  isRetryableStatus,
  newIdempotencyKey,
  SDK_VERSION,
  type MangoClientOptions,
  type RequestOptions,
  type ResponseInfo,
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
export type { MangoResources } from './client';
export type * from './generated/resources';
export type { components as OpenAPIComponents, operations as OpenAPIOperations } from './generated/openapi';
export type { Body, Item, OperationId, Query, Result, ResultAt, StreamParams, Uploadable } from './resource';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions } from './webhooks';
