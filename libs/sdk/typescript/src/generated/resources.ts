// Generated from openapi.yaml by tools/sdk/generate-resources.js (tools/sdk/generate.sh). Do not edit.
/* eslint-disable */
import type { HttpClient, RequestOptions } from '../core';
import type { PagePromise } from '../pagination';
import type { SessionStreamEvent } from '../types';
import {
  GeneratedResource,
  callDownload,
  callJson,
  callList,
  callStream,
  callUpload,
  seg,
  type Body,
  type Item,
  type Query,
  type Result,
  type ResultAt,
  type StreamParams,
  type Uploadable,
} from '../resource';

/** `client.agents.versions` */
export class AgentsVersionsResource extends GeneratedResource {

  /** `GET /v1/agents/{agent_id}/versions — List an Agent's versions` */
  list(agentId: string, params?: Query<'agents.versions.list'>, options?: RequestOptions): PagePromise<Item<'agents.versions.list'>, Result<'agents.versions.list'>> {
    return callList<Item<'agents.versions.list'>, Result<'agents.versions.list'>>(this._http, { method: 'GET', path: `/v1/agents/${seg(agentId)}/versions`, query: params, body: undefined, options });
  }
}

/** `client.agents` */
export class AgentsResource extends GeneratedResource {
  readonly versions: AgentsVersionsResource;

  constructor(http: HttpClient) {
    super(http);
    this.versions = new AgentsVersionsResource(http);
  }

  /** `POST /v1/agents/{agent_id}/archive — Archive an Agent` */
  archive(agentId: string, options?: RequestOptions): Promise<Result<'agents.archive'>> {
    return callJson<Result<'agents.archive'>>(this._http, { method: 'POST', path: `/v1/agents/${seg(agentId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/agents — Create an Agent` */
  create(body: Body<'agents.create'>, options?: RequestOptions): Promise<Result<'agents.create'>> {
    return callJson<Result<'agents.create'>>(this._http, { method: 'POST', path: `/v1/agents`, query: undefined, body: body, options });
  }

  /** `GET /v1/agents — List Agents` */
  list(params?: Query<'agents.list'>, options?: RequestOptions): PagePromise<Item<'agents.list'>, Result<'agents.list'>> {
    return callList<Item<'agents.list'>, Result<'agents.list'>>(this._http, { method: 'GET', path: `/v1/agents`, query: params, body: undefined, options });
  }

  /** `GET /v1/agents/{agent_id} — Get an Agent` */
  retrieve(agentId: string, params?: Query<'agents.retrieve'>, options?: RequestOptions): Promise<Result<'agents.retrieve'>> {
    return callJson<Result<'agents.retrieve'>>(this._http, { method: 'GET', path: `/v1/agents/${seg(agentId)}`, query: params, body: undefined, options });
  }

  /** `POST /v1/agents/{agent_id} — Update an Agent (new version)` */
  update(agentId: string, body: Body<'agents.update'>, options?: RequestOptions): Promise<Result<'agents.update'>> {
    return callJson<Result<'agents.update'>>(this._http, { method: 'POST', path: `/v1/agents/${seg(agentId)}`, query: undefined, body: body, options });
  }
}

/** `client.auditLog` */
export class AuditLogResource extends GeneratedResource {

  /** `GET /v1/audit_log — List the audit log (Mango addition)` */
  list(params?: Query<'audit_log.list'>, options?: RequestOptions): PagePromise<Item<'audit_log.list'>, Result<'audit_log.list'>> {
    return callList<Item<'audit_log.list'>, Result<'audit_log.list'>>(this._http, { method: 'GET', path: `/v1/audit_log`, query: params, body: undefined, options });
  }
}

/** `client.deploymentRuns` */
export class DeploymentRunsResource extends GeneratedResource {

  /** `GET /v1/deployment_runs — List Deployment runs` */
  list(params?: Query<'deployment_runs.list'>, options?: RequestOptions): PagePromise<Item<'deployment_runs.list'>, Result<'deployment_runs.list'>> {
    return callList<Item<'deployment_runs.list'>, Result<'deployment_runs.list'>>(this._http, { method: 'GET', path: `/v1/deployment_runs`, query: params, body: undefined, options });
  }

  /** `GET /v1/deployment_runs/{deployment_run_id} — Get a Deployment run` */
  retrieve(deploymentRunId: string, options?: RequestOptions): Promise<Result<'deployment_runs.retrieve'>> {
    return callJson<Result<'deployment_runs.retrieve'>>(this._http, { method: 'GET', path: `/v1/deployment_runs/${seg(deploymentRunId)}`, query: undefined, body: undefined, options });
  }
}

/** `client.deployments` */
export class DeploymentsResource extends GeneratedResource {

  /** `POST /v1/deployments/{deployment_id}/archive — Archive a Deployment` */
  archive(deploymentId: string, options?: RequestOptions): Promise<Result<'deployments.archive'>> {
    return callJson<Result<'deployments.archive'>>(this._http, { method: 'POST', path: `/v1/deployments/${seg(deploymentId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/deployments — Create a Deployment` */
  create(body: Body<'deployments.create'>, options?: RequestOptions): Promise<Result<'deployments.create'>> {
    return callJson<Result<'deployments.create'>>(this._http, { method: 'POST', path: `/v1/deployments`, query: undefined, body: body, options });
  }

  /** `GET /v1/deployments — List Deployments` */
  list(params?: Query<'deployments.list'>, options?: RequestOptions): PagePromise<Item<'deployments.list'>, Result<'deployments.list'>> {
    return callList<Item<'deployments.list'>, Result<'deployments.list'>>(this._http, { method: 'GET', path: `/v1/deployments`, query: params, body: undefined, options });
  }

  /** `POST /v1/deployments/{deployment_id}/pause — Pause a Deployment` */
  pause(deploymentId: string, options?: RequestOptions): Promise<Result<'deployments.pause'>> {
    return callJson<Result<'deployments.pause'>>(this._http, { method: 'POST', path: `/v1/deployments/${seg(deploymentId)}/pause`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/deployments/{deployment_id} — Get a Deployment` */
  retrieve(deploymentId: string, options?: RequestOptions): Promise<Result<'deployments.retrieve'>> {
    return callJson<Result<'deployments.retrieve'>>(this._http, { method: 'GET', path: `/v1/deployments/${seg(deploymentId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/deployments/{deployment_id}/run — Run a Deployment now` */
  run(deploymentId: string, options?: RequestOptions): Promise<Result<'deployments.run'>> {
    return callJson<Result<'deployments.run'>>(this._http, { method: 'POST', path: `/v1/deployments/${seg(deploymentId)}/run`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/deployments/{deployment_id}/unpause — Unpause a Deployment` */
  unpause(deploymentId: string, options?: RequestOptions): Promise<Result<'deployments.unpause'>> {
    return callJson<Result<'deployments.unpause'>>(this._http, { method: 'POST', path: `/v1/deployments/${seg(deploymentId)}/unpause`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/deployments/{deployment_id} — Update a Deployment` */
  update(deploymentId: string, body: Body<'deployments.update'>, options?: RequestOptions): Promise<Result<'deployments.update'>> {
    return callJson<Result<'deployments.update'>>(this._http, { method: 'POST', path: `/v1/deployments/${seg(deploymentId)}`, query: undefined, body: body, options });
  }
}

/** `client.environments.work` */
export class EnvironmentsWorkResource extends GeneratedResource {

  /** `POST /v1/environments/{environment_id}/work/{work_id}/ack — Acknowledge a polled Work item` */
  ack(environmentId: string, workId: string, options?: RequestOptions): Promise<Result<'environments.work.ack'>> {
    return callJson<Result<'environments.work.ack'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}/ack`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/environments/{environment_id}/work — Create a healthcheck Work item` */
  create(environmentId: string, body: Body<'environments.work.create'>, options?: RequestOptions): Promise<Result<'environments.work.create'>> {
    return callJson<Result<'environments.work.create'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work`, query: undefined, body: body, options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id}/fail — Fail Session Work on a permanent input error` */
  fail(environmentId: string, workId: string, body: Body<'environments.work.fail'>, options?: RequestOptions): Promise<Result<'environments.work.fail'>> {
    return callJson<Result<'environments.work.fail'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}/fail`, query: undefined, body: body, options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id}/heartbeat — Renew a Work lease` */
  heartbeat(environmentId: string, workId: string, params: Query<'environments.work.heartbeat'>, options?: RequestOptions): Promise<Result<'environments.work.heartbeat'>> {
    return callJson<Result<'environments.work.heartbeat'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}/heartbeat`, query: params, body: undefined, options });
  }

  /** `GET /v1/environments/{environment_id}/work — List Work items` */
  list(environmentId: string, params?: Query<'environments.work.list'>, options?: RequestOptions): PagePromise<Item<'environments.work.list'>, Result<'environments.work.list'>> {
    return callList<Item<'environments.work.list'>, Result<'environments.work.list'>>(this._http, { method: 'GET', path: `/v1/environments/${seg(environmentId)}/work`, query: params, body: undefined, options });
  }

  /** `GET /v1/environments/{environment_id}/work/poll — Poll for Work` */
  poll(environmentId: string, params?: Query<'environments.work.poll'>, options?: RequestOptions): Promise<Result<'environments.work.poll'>> {
    return callJson<Result<'environments.work.poll'>>(this._http, { method: 'GET', path: `/v1/environments/${seg(environmentId)}/work/poll`, query: params, body: undefined, options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id}/result — Report a healthcheck result` */
  result(environmentId: string, workId: string, body: Body<'environments.work.result'>, options?: RequestOptions): Promise<Result<'environments.work.result'>> {
    return callJson<Result<'environments.work.result'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}/result`, query: undefined, body: body, options });
  }

  /** `GET /v1/environments/{environment_id}/work/{work_id} — Get a Work item` */
  retrieve(environmentId: string, workId: string, options?: RequestOptions): Promise<Result<'environments.work.retrieve'>> {
    return callJson<Result<'environments.work.retrieve'>>(this._http, { method: 'GET', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/environments/{environment_id}/work/stats — Get Work queue statistics` */
  stats(environmentId: string, options?: RequestOptions): Promise<Result<'environments.work.stats'>> {
    return callJson<Result<'environments.work.stats'>>(this._http, { method: 'GET', path: `/v1/environments/${seg(environmentId)}/work/stats`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id}/stop — Stop a Work item` */
  stop(environmentId: string, workId: string, body?: Body<'environments.work.stop'>, options?: RequestOptions): Promise<void> {
    return callJson<void>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}/stop`, query: undefined, body: body, options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id} — Update a Work item's metadata` */
  update(environmentId: string, workId: string, body: Body<'environments.work.update'>, options?: RequestOptions): Promise<Result<'environments.work.update'>> {
    return callJson<Result<'environments.work.update'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/work/${seg(workId)}`, query: undefined, body: body, options });
  }
}

/** `client.environments` */
export class EnvironmentsResource extends GeneratedResource {
  readonly work: EnvironmentsWorkResource;

  constructor(http: HttpClient) {
    super(http);
    this.work = new EnvironmentsWorkResource(http);
  }

  /** `POST /v1/environments/{environment_id}/archive — Archive an Environment` */
  archive(environmentId: string, options?: RequestOptions): Promise<Result<'environments.archive'>> {
    return callJson<Result<'environments.archive'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/environments — Create an Environment` */
  create(body: Body<'environments.create'>, options?: RequestOptions): Promise<Result<'environments.create'>> {
    return callJson<Result<'environments.create'>>(this._http, { method: 'POST', path: `/v1/environments`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/environments/{environment_id} — Delete an Environment` */
  delete(environmentId: string, options?: RequestOptions): Promise<Result<'environments.delete'>> {
    return callJson<Result<'environments.delete'>>(this._http, { method: 'DELETE', path: `/v1/environments/${seg(environmentId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/environments — List Environments` */
  list(params?: Query<'environments.list'>, options?: RequestOptions): PagePromise<Item<'environments.list'>, Result<'environments.list'>> {
    return callList<Item<'environments.list'>, Result<'environments.list'>>(this._http, { method: 'GET', path: `/v1/environments`, query: params, body: undefined, options });
  }

  /** `GET /v1/environments/{environment_id} — Get an Environment` */
  retrieve(environmentId: string, options?: RequestOptions): Promise<Result<'environments.retrieve'>> {
    return callJson<Result<'environments.retrieve'>>(this._http, { method: 'GET', path: `/v1/environments/${seg(environmentId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/environments/{environment_id} — Update an Environment` */
  update(environmentId: string, body: Body<'environments.update'>, options?: RequestOptions): Promise<Result<'environments.update'>> {
    return callJson<Result<'environments.update'>>(this._http, { method: 'POST', path: `/v1/environments/${seg(environmentId)}`, query: undefined, body: body, options });
  }
}

/** `client.files` */
export class FilesResource extends GeneratedResource {

  /** `GET /v1/files/{file_id}/content — Download a File's bytes` */
  content(fileId: string, options?: RequestOptions): Promise<Response> {
    return callDownload(this._http, { method: 'GET', path: `/v1/files/${seg(fileId)}/content`, query: undefined, body: undefined, options });
  }

  /** `DELETE /v1/files/{file_id} — Delete a File` */
  delete(fileId: string, options?: RequestOptions): Promise<Result<'files.delete'>> {
    return callJson<Result<'files.delete'>>(this._http, { method: 'DELETE', path: `/v1/files/${seg(fileId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/files — List Files` */
  list(params?: Query<'files.list'>, options?: RequestOptions): PagePromise<Item<'files.list'>, Result<'files.list'>> {
    return callList<Item<'files.list'>, Result<'files.list'>>(this._http, { method: 'GET', path: `/v1/files`, query: params, body: undefined, options });
  }

  /** `GET /v1/files/{file_id} — Get a File's metadata` */
  retrieve(fileId: string, options?: RequestOptions): Promise<Result<'files.retrieve'>> {
    return callJson<Result<'files.retrieve'>>(this._http, { method: 'GET', path: `/v1/files/${seg(fileId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/files — Upload a File` */
  upload(body: { 'file': Uploadable }, options?: RequestOptions): Promise<Result<'files.upload'>> {
    return callUpload<Result<'files.upload'>>(this._http, { method: 'POST', path: `/v1/files`, query: undefined, body: body, options });
  }
}

/** `client.health` */
export class HealthResource extends GeneratedResource {

  /** `GET /healthz — Liveness probe` */
  liveness(options?: RequestOptions): Promise<Result<'health.liveness'>> {
    return callJson<Result<'health.liveness'>>(this._http, { method: 'GET', path: `/healthz`, query: undefined, body: undefined, options });
  }

  /** `GET /readyz — Readiness probe` */
  readiness(options?: RequestOptions): Promise<Result<'health.readiness'> | ResultAt<'health.readiness', 503>> {
    return callJson<Result<'health.readiness'> | ResultAt<'health.readiness', 503>>(this._http, { method: 'GET', path: `/readyz`, query: undefined, body: undefined, options, accept: [503] });
  }
}

/** `client.memoryStores.memories` */
export class MemoryStoresMemoriesResource extends GeneratedResource {

  /** `POST /v1/memory_stores/{memory_store_id}/memories — Create a Memory at a path` */
  create(memoryStoreId: string, body: Body<'memory_stores.memories.create'>, query?: Query<'memory_stores.memories.create'>, options?: RequestOptions): Promise<Result<'memory_stores.memories.create'>> {
    return callJson<Result<'memory_stores.memories.create'>>(this._http, { method: 'POST', path: `/v1/memory_stores/${seg(memoryStoreId)}/memories`, query: query, body: body, options });
  }

  /** `DELETE /v1/memory_stores/{memory_store_id}/memories/{memory_id} — Delete a Memory` */
  delete(memoryStoreId: string, memoryId: string, params?: Query<'memory_stores.memories.delete'>, options?: RequestOptions): Promise<Result<'memory_stores.memories.delete'>> {
    return callJson<Result<'memory_stores.memories.delete'>>(this._http, { method: 'DELETE', path: `/v1/memory_stores/${seg(memoryStoreId)}/memories/${seg(memoryId)}`, query: params, body: undefined, options });
  }

  /** `GET /v1/memory_stores/{memory_store_id}/memories — List Memories` */
  list(memoryStoreId: string, params?: Query<'memory_stores.memories.list'>, options?: RequestOptions): PagePromise<Item<'memory_stores.memories.list'>, Result<'memory_stores.memories.list'>> {
    return callList<Item<'memory_stores.memories.list'>, Result<'memory_stores.memories.list'>>(this._http, { method: 'GET', path: `/v1/memory_stores/${seg(memoryStoreId)}/memories`, query: params, body: undefined, options });
  }

  /** `GET /v1/memory_stores/{memory_store_id}/memories/{memory_id} — Get a Memory` */
  retrieve(memoryStoreId: string, memoryId: string, params?: Query<'memory_stores.memories.retrieve'>, options?: RequestOptions): Promise<Result<'memory_stores.memories.retrieve'>> {
    return callJson<Result<'memory_stores.memories.retrieve'>>(this._http, { method: 'GET', path: `/v1/memory_stores/${seg(memoryStoreId)}/memories/${seg(memoryId)}`, query: params, body: undefined, options });
  }

  /** `POST /v1/memory_stores/{memory_store_id}/memories/{memory_id} — Update a Memory's content and/or path` */
  update(memoryStoreId: string, memoryId: string, body: Body<'memory_stores.memories.update'>, query?: Query<'memory_stores.memories.update'>, options?: RequestOptions): Promise<Result<'memory_stores.memories.update'>> {
    return callJson<Result<'memory_stores.memories.update'>>(this._http, { method: 'POST', path: `/v1/memory_stores/${seg(memoryStoreId)}/memories/${seg(memoryId)}`, query: query, body: body, options });
  }
}

/** `client.memoryStores.memoryVersions` */
export class MemoryStoresMemoryVersionsResource extends GeneratedResource {

  /** `GET /v1/memory_stores/{memory_store_id}/memory_versions — List Memory versions` */
  list(memoryStoreId: string, params?: Query<'memory_stores.memory_versions.list'>, options?: RequestOptions): PagePromise<Item<'memory_stores.memory_versions.list'>, Result<'memory_stores.memory_versions.list'>> {
    return callList<Item<'memory_stores.memory_versions.list'>, Result<'memory_stores.memory_versions.list'>>(this._http, { method: 'GET', path: `/v1/memory_stores/${seg(memoryStoreId)}/memory_versions`, query: params, body: undefined, options });
  }

  /** `POST /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/redact — Redact a Memory version` */
  redact(memoryStoreId: string, memoryVersionId: string, options?: RequestOptions): Promise<Result<'memory_stores.memory_versions.redact'>> {
    return callJson<Result<'memory_stores.memory_versions.redact'>>(this._http, { method: 'POST', path: `/v1/memory_stores/${seg(memoryStoreId)}/memory_versions/${seg(memoryVersionId)}/redact`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id} — Get a Memory version` */
  retrieve(memoryStoreId: string, memoryVersionId: string, params?: Query<'memory_stores.memory_versions.retrieve'>, options?: RequestOptions): Promise<Result<'memory_stores.memory_versions.retrieve'>> {
    return callJson<Result<'memory_stores.memory_versions.retrieve'>>(this._http, { method: 'GET', path: `/v1/memory_stores/${seg(memoryStoreId)}/memory_versions/${seg(memoryVersionId)}`, query: params, body: undefined, options });
  }
}

/** `client.memoryStores` */
export class MemoryStoresResource extends GeneratedResource {
  readonly memories: MemoryStoresMemoriesResource;
  readonly memoryVersions: MemoryStoresMemoryVersionsResource;

  constructor(http: HttpClient) {
    super(http);
    this.memories = new MemoryStoresMemoriesResource(http);
    this.memoryVersions = new MemoryStoresMemoryVersionsResource(http);
  }

  /** `POST /v1/memory_stores/{memory_store_id}/archive — Archive a Memory Store` */
  archive(memoryStoreId: string, options?: RequestOptions): Promise<Result<'memory_stores.archive'>> {
    return callJson<Result<'memory_stores.archive'>>(this._http, { method: 'POST', path: `/v1/memory_stores/${seg(memoryStoreId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/memory_stores — Create a Memory Store` */
  create(body: Body<'memory_stores.create'>, options?: RequestOptions): Promise<Result<'memory_stores.create'>> {
    return callJson<Result<'memory_stores.create'>>(this._http, { method: 'POST', path: `/v1/memory_stores`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/memory_stores/{memory_store_id} — Delete a Memory Store` */
  delete(memoryStoreId: string, options?: RequestOptions): Promise<Result<'memory_stores.delete'>> {
    return callJson<Result<'memory_stores.delete'>>(this._http, { method: 'DELETE', path: `/v1/memory_stores/${seg(memoryStoreId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/memory_stores — List Memory Stores` */
  list(params?: Query<'memory_stores.list'>, options?: RequestOptions): PagePromise<Item<'memory_stores.list'>, Result<'memory_stores.list'>> {
    return callList<Item<'memory_stores.list'>, Result<'memory_stores.list'>>(this._http, { method: 'GET', path: `/v1/memory_stores`, query: params, body: undefined, options });
  }

  /** `GET /v1/memory_stores/{memory_store_id} — Get a Memory Store` */
  retrieve(memoryStoreId: string, options?: RequestOptions): Promise<Result<'memory_stores.retrieve'>> {
    return callJson<Result<'memory_stores.retrieve'>>(this._http, { method: 'GET', path: `/v1/memory_stores/${seg(memoryStoreId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/memory_stores/{memory_store_id} — Update a Memory Store` */
  update(memoryStoreId: string, body: Body<'memory_stores.update'>, options?: RequestOptions): Promise<Result<'memory_stores.update'>> {
    return callJson<Result<'memory_stores.update'>>(this._http, { method: 'POST', path: `/v1/memory_stores/${seg(memoryStoreId)}`, query: undefined, body: body, options });
  }
}

/** `client.sessions.events` */
export class SessionsEventsResource extends GeneratedResource {

  /** `GET /v1/sessions/{session_id}/events — List events` */
  list(sessionId: string, params?: Query<'sessions.events.list'>, options?: RequestOptions): PagePromise<Item<'sessions.events.list'>, Result<'sessions.events.list'>> {
    return callList<Item<'sessions.events.list'>, Result<'sessions.events.list'>>(this._http, { method: 'GET', path: `/v1/sessions/${seg(sessionId)}/events`, query: params, body: undefined, options });
  }

  /** `POST /v1/sessions/{session_id}/events — Send events` */
  send(sessionId: string, body: Body<'sessions.events.send'>, options?: RequestOptions): Promise<Result<'sessions.events.send'>> {
    return callJson<Result<'sessions.events.send'>>(this._http, { method: 'POST', path: `/v1/sessions/${seg(sessionId)}/events`, query: undefined, body: body, options });
  }

  /** `GET /v1/sessions/{session_id}/events/stream — Stream events (SSE)` */
  stream(sessionId: string, params: StreamParams & Query<'sessions.events.stream'> = {}, options?: RequestOptions): AsyncIterable<SessionStreamEvent> {
    return callStream(this._http, `/v1/sessions/${seg(sessionId)}/events/stream`, params, options);
  }
}

/** `client.sessions.threads.events` */
export class SessionsThreadsEventsResource extends GeneratedResource {

  /** `GET /v1/sessions/{session_id}/threads/{thread_id}/events — List a Thread's events` */
  list(sessionId: string, threadId: string, params?: Query<'sessions.threads.events.list'>, options?: RequestOptions): PagePromise<Item<'sessions.threads.events.list'>, Result<'sessions.threads.events.list'>> {
    return callList<Item<'sessions.threads.events.list'>, Result<'sessions.threads.events.list'>>(this._http, { method: 'GET', path: `/v1/sessions/${seg(sessionId)}/threads/${seg(threadId)}/events`, query: params, body: undefined, options });
  }
}

/** `client.sessions.threads` */
export class SessionsThreadsResource extends GeneratedResource {
  readonly events: SessionsThreadsEventsResource;

  constructor(http: HttpClient) {
    super(http);
    this.events = new SessionsThreadsEventsResource(http);
  }

  /** `POST /v1/sessions/{session_id}/threads/{thread_id}/archive — Archive a Thread` */
  archive(sessionId: string, threadId: string, options?: RequestOptions): Promise<Result<'sessions.threads.archive'>> {
    return callJson<Result<'sessions.threads.archive'>>(this._http, { method: 'POST', path: `/v1/sessions/${seg(sessionId)}/threads/${seg(threadId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/sessions/{session_id}/threads/{thread_id} — Get a Thread` */
  get(sessionId: string, threadId: string, options?: RequestOptions): Promise<Result<'sessions.threads.get'>> {
    return callJson<Result<'sessions.threads.get'>>(this._http, { method: 'GET', path: `/v1/sessions/${seg(sessionId)}/threads/${seg(threadId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/sessions/{session_id}/threads — List a Session's Threads` */
  list(sessionId: string, params?: Query<'sessions.threads.list'>, options?: RequestOptions): PagePromise<Item<'sessions.threads.list'>, Result<'sessions.threads.list'>> {
    return callList<Item<'sessions.threads.list'>, Result<'sessions.threads.list'>>(this._http, { method: 'GET', path: `/v1/sessions/${seg(sessionId)}/threads`, query: params, body: undefined, options });
  }

  /** `GET /v1/sessions/{session_id}/threads/{thread_id}/stream — Stream a Thread's events (SSE)` */
  stream(sessionId: string, threadId: string, params: StreamParams & Query<'sessions.threads.stream'> = {}, options?: RequestOptions): AsyncIterable<SessionStreamEvent> {
    return callStream(this._http, `/v1/sessions/${seg(sessionId)}/threads/${seg(threadId)}/stream`, params, options);
  }
}

/** `client.sessions` */
export class SessionsResource extends GeneratedResource {
  readonly events: SessionsEventsResource;
  readonly threads: SessionsThreadsResource;

  constructor(http: HttpClient) {
    super(http);
    this.events = new SessionsEventsResource(http);
    this.threads = new SessionsThreadsResource(http);
  }

  /** `POST /v1/sessions/{session_id}/archive — Archive a Session` */
  archive(sessionId: string, options?: RequestOptions): Promise<Result<'sessions.archive'>> {
    return callJson<Result<'sessions.archive'>>(this._http, { method: 'POST', path: `/v1/sessions/${seg(sessionId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/sessions — Create a Session` */
  create(body: Body<'sessions.create'>, options?: RequestOptions): Promise<Result<'sessions.create'>> {
    return callJson<Result<'sessions.create'>>(this._http, { method: 'POST', path: `/v1/sessions`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/sessions/{session_id} — Delete a Session` */
  delete(sessionId: string, options?: RequestOptions): Promise<Result<'sessions.delete'>> {
    return callJson<Result<'sessions.delete'>>(this._http, { method: 'DELETE', path: `/v1/sessions/${seg(sessionId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/sessions — List Sessions` */
  list(params?: Query<'sessions.list'>, options?: RequestOptions): PagePromise<Item<'sessions.list'>, Result<'sessions.list'>> {
    return callList<Item<'sessions.list'>, Result<'sessions.list'>>(this._http, { method: 'GET', path: `/v1/sessions`, query: params, body: undefined, options });
  }

  /** `GET /v1/sessions/{session_id} — Get a Session` */
  retrieve(sessionId: string, options?: RequestOptions): Promise<Result<'sessions.retrieve'>> {
    return callJson<Result<'sessions.retrieve'>>(this._http, { method: 'GET', path: `/v1/sessions/${seg(sessionId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/sessions/{session_id} — Update a Session` */
  update(sessionId: string, body: Body<'sessions.update'>, options?: RequestOptions): Promise<Result<'sessions.update'>> {
    return callJson<Result<'sessions.update'>>(this._http, { method: 'POST', path: `/v1/sessions/${seg(sessionId)}`, query: undefined, body: body, options });
  }
}

/** `client.skills.versions` */
export class SkillsVersionsResource extends GeneratedResource {

  /** `GET /v1/skills/{skill_id}/versions/{version}/content — Download a Skill version's archive` */
  content(skillId: string, version: string, options?: RequestOptions): Promise<Response> {
    return callDownload(this._http, { method: 'GET', path: `/v1/skills/${seg(skillId)}/versions/${seg(version)}/content`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/skills/{skill_id}/versions — Create a Skill version` */
  create(skillId: string, body: { 'files[]': Uploadable[] }, options?: RequestOptions): Promise<Result<'skills.versions.create'>> {
    return callUpload<Result<'skills.versions.create'>>(this._http, { method: 'POST', path: `/v1/skills/${seg(skillId)}/versions`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/skills/{skill_id}/versions/{version} — Delete a Skill version` */
  delete(skillId: string, version: string, options?: RequestOptions): Promise<Result<'skills.versions.delete'>> {
    return callJson<Result<'skills.versions.delete'>>(this._http, { method: 'DELETE', path: `/v1/skills/${seg(skillId)}/versions/${seg(version)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/skills/{skill_id}/versions — List a Skill's versions` */
  list(skillId: string, params?: Query<'skills.versions.list'>, options?: RequestOptions): PagePromise<Item<'skills.versions.list'>, Result<'skills.versions.list'>> {
    return callList<Item<'skills.versions.list'>, Result<'skills.versions.list'>>(this._http, { method: 'GET', path: `/v1/skills/${seg(skillId)}/versions`, query: params, body: undefined, options });
  }

  /** `GET /v1/skills/{skill_id}/versions/{version} — Get a Skill version` */
  retrieve(skillId: string, version: string, options?: RequestOptions): Promise<Result<'skills.versions.retrieve'>> {
    return callJson<Result<'skills.versions.retrieve'>>(this._http, { method: 'GET', path: `/v1/skills/${seg(skillId)}/versions/${seg(version)}`, query: undefined, body: undefined, options });
  }
}

/** `client.skills` */
export class SkillsResource extends GeneratedResource {
  readonly versions: SkillsVersionsResource;

  constructor(http: HttpClient) {
    super(http);
    this.versions = new SkillsVersionsResource(http);
  }

  /** `POST /v1/skills — Create a Skill (with its first version)` */
  create(body: { 'files[]': Uploadable[]; 'display_title'?: string }, options?: RequestOptions): Promise<Result<'skills.create'>> {
    return callUpload<Result<'skills.create'>>(this._http, { method: 'POST', path: `/v1/skills`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/skills/{skill_id} — Delete a Skill and all its versions` */
  delete(skillId: string, options?: RequestOptions): Promise<Result<'skills.delete'>> {
    return callJson<Result<'skills.delete'>>(this._http, { method: 'DELETE', path: `/v1/skills/${seg(skillId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/skills — List Skills` */
  list(params?: Query<'skills.list'>, options?: RequestOptions): PagePromise<Item<'skills.list'>, Result<'skills.list'>> {
    return callList<Item<'skills.list'>, Result<'skills.list'>>(this._http, { method: 'GET', path: `/v1/skills`, query: params, body: undefined, options });
  }

  /** `GET /v1/skills/{skill_id} — Get a Skill` */
  retrieve(skillId: string, options?: RequestOptions): Promise<Result<'skills.retrieve'>> {
    return callJson<Result<'skills.retrieve'>>(this._http, { method: 'GET', path: `/v1/skills/${seg(skillId)}`, query: undefined, body: undefined, options });
  }
}

/** `client.vaults.credentials` */
export class VaultsCredentialsResource extends GeneratedResource {

  /** `POST /v1/vaults/{vault_id}/credentials/{credential_id}/archive — Archive a Vault credential` */
  archive(vaultId: string, credentialId: string, options?: RequestOptions): Promise<Result<'vaults.credentials.archive'>> {
    return callJson<Result<'vaults.credentials.archive'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}/credentials/${seg(credentialId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/vaults/{vault_id}/credentials — Create a Vault credential` */
  create(vaultId: string, body: Body<'vaults.credentials.create'>, options?: RequestOptions): Promise<Result<'vaults.credentials.create'>> {
    return callJson<Result<'vaults.credentials.create'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}/credentials`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/vaults/{vault_id}/credentials/{credential_id} — Delete a Vault credential` */
  delete(vaultId: string, credentialId: string, options?: RequestOptions): Promise<Result<'vaults.credentials.delete'>> {
    return callJson<Result<'vaults.credentials.delete'>>(this._http, { method: 'DELETE', path: `/v1/vaults/${seg(vaultId)}/credentials/${seg(credentialId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/vaults/{vault_id}/credentials — List a Vault's credentials` */
  list(vaultId: string, params?: Query<'vaults.credentials.list'>, options?: RequestOptions): PagePromise<Item<'vaults.credentials.list'>, Result<'vaults.credentials.list'>> {
    return callList<Item<'vaults.credentials.list'>, Result<'vaults.credentials.list'>>(this._http, { method: 'GET', path: `/v1/vaults/${seg(vaultId)}/credentials`, query: params, body: undefined, options });
  }

  /** `POST /v1/vaults/{vault_id}/credentials/{credential_id}/mcp_oauth_validate — Live-probe an mcp_oauth credential` */
  mcpOauthValidate(vaultId: string, credentialId: string, options?: RequestOptions): Promise<Result<'vaults.credentials.mcp_oauth_validate'>> {
    return callJson<Result<'vaults.credentials.mcp_oauth_validate'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}/credentials/${seg(credentialId)}/mcp_oauth_validate`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/vaults/{vault_id}/credentials/{credential_id} — Get a Vault credential` */
  retrieve(vaultId: string, credentialId: string, options?: RequestOptions): Promise<Result<'vaults.credentials.retrieve'>> {
    return callJson<Result<'vaults.credentials.retrieve'>>(this._http, { method: 'GET', path: `/v1/vaults/${seg(vaultId)}/credentials/${seg(credentialId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/vaults/{vault_id}/credentials/{credential_id} — Update a Vault credential` */
  update(vaultId: string, credentialId: string, body: Body<'vaults.credentials.update'>, options?: RequestOptions): Promise<Result<'vaults.credentials.update'>> {
    return callJson<Result<'vaults.credentials.update'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}/credentials/${seg(credentialId)}`, query: undefined, body: body, options });
  }
}

/** `client.vaults` */
export class VaultsResource extends GeneratedResource {
  readonly credentials: VaultsCredentialsResource;

  constructor(http: HttpClient) {
    super(http);
    this.credentials = new VaultsCredentialsResource(http);
  }

  /** `POST /v1/vaults/{vault_id}/archive — Archive a Vault` */
  archive(vaultId: string, options?: RequestOptions): Promise<Result<'vaults.archive'>> {
    return callJson<Result<'vaults.archive'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}/archive`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/vaults — Create a Vault` */
  create(body: Body<'vaults.create'>, options?: RequestOptions): Promise<Result<'vaults.create'>> {
    return callJson<Result<'vaults.create'>>(this._http, { method: 'POST', path: `/v1/vaults`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/vaults/{vault_id} — Delete a Vault` */
  delete(vaultId: string, options?: RequestOptions): Promise<Result<'vaults.delete'>> {
    return callJson<Result<'vaults.delete'>>(this._http, { method: 'DELETE', path: `/v1/vaults/${seg(vaultId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/vaults — List Vaults` */
  list(params?: Query<'vaults.list'>, options?: RequestOptions): PagePromise<Item<'vaults.list'>, Result<'vaults.list'>> {
    return callList<Item<'vaults.list'>, Result<'vaults.list'>>(this._http, { method: 'GET', path: `/v1/vaults`, query: params, body: undefined, options });
  }

  /** `GET /v1/vaults/{vault_id} — Get a Vault` */
  retrieve(vaultId: string, options?: RequestOptions): Promise<Result<'vaults.retrieve'>> {
    return callJson<Result<'vaults.retrieve'>>(this._http, { method: 'GET', path: `/v1/vaults/${seg(vaultId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/vaults/{vault_id} — Update a Vault` */
  update(vaultId: string, body: Body<'vaults.update'>, options?: RequestOptions): Promise<Result<'vaults.update'>> {
    return callJson<Result<'vaults.update'>>(this._http, { method: 'POST', path: `/v1/vaults/${seg(vaultId)}`, query: undefined, body: body, options });
  }
}

/** `client.webhooks.deliveries` */
export class WebhooksDeliveriesResource extends GeneratedResource {

  /** `GET /v1/webhooks/{webhook_id}/deliveries — The delivery log of an endpoint (Mango addition)` */
  list(webhookId: string, params?: Query<'webhooks.deliveries.list'>, options?: RequestOptions): PagePromise<Item<'webhooks.deliveries.list'>, Result<'webhooks.deliveries.list'>> {
    return callList<Item<'webhooks.deliveries.list'>, Result<'webhooks.deliveries.list'>>(this._http, { method: 'GET', path: `/v1/webhooks/${seg(webhookId)}/deliveries`, query: params, body: undefined, options });
  }

  /** `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver — Send an event to the endpoint again (Mango addition)` */
  redeliver(webhookId: string, deliveryId: string, options?: RequestOptions): Promise<Result<'webhooks.deliveries.redeliver'>> {
    return callJson<Result<'webhooks.deliveries.redeliver'>>(this._http, { method: 'POST', path: `/v1/webhooks/${seg(webhookId)}/deliveries/${seg(deliveryId)}/redeliver`, query: undefined, body: undefined, options });
  }
}

/** `client.webhooks` */
export class WebhooksResource extends GeneratedResource {
  readonly deliveries: WebhooksDeliveriesResource;

  constructor(http: HttpClient) {
    super(http);
    this.deliveries = new WebhooksDeliveriesResource(http);
  }

  /** `POST /v1/webhooks — Register a webhook endpoint (Mango addition)` */
  create(body: Body<'webhooks.create'>, options?: RequestOptions): Promise<Result<'webhooks.create'>> {
    return callJson<Result<'webhooks.create'>>(this._http, { method: 'POST', path: `/v1/webhooks`, query: undefined, body: body, options });
  }

  /** `DELETE /v1/webhooks/{webhook_id} — Delete a webhook endpoint (Mango addition)` */
  delete(webhookId: string, options?: RequestOptions): Promise<Result<'webhooks.delete'>> {
    return callJson<Result<'webhooks.delete'>>(this._http, { method: 'DELETE', path: `/v1/webhooks/${seg(webhookId)}`, query: undefined, body: undefined, options });
  }

  /** `GET /v1/webhooks — List webhook endpoints (Mango addition)` */
  list(params?: Query<'webhooks.list'>, options?: RequestOptions): PagePromise<Item<'webhooks.list'>, Result<'webhooks.list'>> {
    return callList<Item<'webhooks.list'>, Result<'webhooks.list'>>(this._http, { method: 'GET', path: `/v1/webhooks`, query: params, body: undefined, options });
  }

  /** `GET /v1/webhooks/{webhook_id} — Get a webhook endpoint (Mango addition)` */
  retrieve(webhookId: string, options?: RequestOptions): Promise<Result<'webhooks.retrieve'>> {
    return callJson<Result<'webhooks.retrieve'>>(this._http, { method: 'GET', path: `/v1/webhooks/${seg(webhookId)}`, query: undefined, body: undefined, options });
  }

  /** `POST /v1/webhooks/{webhook_id}/rotate_secret — Rotate a webhook's signing secret (Mango addition)` */
  rotateSecret(webhookId: string, body?: Body<'webhooks.rotate_secret'>, options?: RequestOptions): Promise<Result<'webhooks.rotate_secret'>> {
    return callJson<Result<'webhooks.rotate_secret'>>(this._http, { method: 'POST', path: `/v1/webhooks/${seg(webhookId)}/rotate_secret`, query: undefined, body: body, options });
  }

  /** `POST /v1/webhooks/{webhook_id} — Update a webhook endpoint (Mango addition)` */
  update(webhookId: string, body: Body<'webhooks.update'>, options?: RequestOptions): Promise<Result<'webhooks.update'>> {
    return callJson<Result<'webhooks.update'>>(this._http, { method: 'POST', path: `/v1/webhooks/${seg(webhookId)}`, query: undefined, body: body, options });
  }
}

/** Every resource of openapi.yaml (the root of `MangoClient`). */
export class GeneratedResources extends GeneratedResource {
  readonly agents: AgentsResource;
  readonly auditLog: AuditLogResource;
  readonly deploymentRuns: DeploymentRunsResource;
  readonly deployments: DeploymentsResource;
  readonly environments: EnvironmentsResource;
  readonly files: FilesResource;
  readonly health: HealthResource;
  readonly memoryStores: MemoryStoresResource;
  readonly sessions: SessionsResource;
  readonly skills: SkillsResource;
  readonly vaults: VaultsResource;
  readonly webhooks: WebhooksResource;

  constructor(http: HttpClient) {
    super(http);
    this.agents = new AgentsResource(http);
    this.auditLog = new AuditLogResource(http);
    this.deploymentRuns = new DeploymentRunsResource(http);
    this.deployments = new DeploymentsResource(http);
    this.environments = new EnvironmentsResource(http);
    this.files = new FilesResource(http);
    this.health = new HealthResource(http);
    this.memoryStores = new MemoryStoresResource(http);
    this.sessions = new SessionsResource(http);
    this.skills = new SkillsResource(http);
    this.vaults = new VaultsResource(http);
    this.webhooks = new WebhooksResource(http);
  }
}
