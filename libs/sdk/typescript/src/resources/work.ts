import { HttpClient, pathSegment, RequestOptions } from '../core';
import { PagePromise } from '../pagination';
import type {
  Page,
  PolledWork,
  RedactedWork,
  WorkCreateParams,
  WorkFailParams,
  WorkHeartbeat,
  WorkHeartbeatParams,
  WorkListParams,
  WorkPollParams,
  WorkQueueStats,
  WorkResultParams,
  WorkStopParams,
  WorkUpdateParams,
} from '../types';

/** Extra time granted to a long poll beyond `block_ms` before the client gives up. */
const POLL_TIMEOUT_MARGIN_MS = 10_000;

/**
 * `client.environments.work` — the Work queue and lease protocol of a self-hosted Environment.
 *
 * Credentials: create/retrieve/update/list need a Workspace API key; poll/ack an Environment key;
 * stats either; heartbeat/result/fail a Work token (see `client.withToken`); stop a Workspace API key
 * or the Work token.
 */
export class EnvironmentWork {
  constructor(private readonly http: HttpClient) {}

  /** `POST /v1/environments/{environment_id}/work` — creates a healthcheck Work item (201). */
  create(
    environmentId: string,
    params: WorkCreateParams = { data: { type: 'healthcheck' } },
    options?: RequestOptions,
  ): Promise<RedactedWork> {
    return this.http.request({ method: 'POST', path: this.base(environmentId), body: params, options });
  }

  /** `GET /v1/environments/{environment_id}/work/{work_id}` */
  retrieve(environmentId: string, workId: string, options?: RequestOptions): Promise<RedactedWork> {
    return this.http.request({ method: 'GET', path: this.item(environmentId, workId), options });
  }

  /** `POST /v1/environments/{environment_id}/work/{work_id}` — patches `metadata`. */
  update(
    environmentId: string,
    workId: string,
    params: WorkUpdateParams,
    options?: RequestOptions,
  ): Promise<RedactedWork> {
    return this.http.request({
      method: 'POST',
      path: this.item(environmentId, workId),
      body: params,
      options,
    });
  }

  /** `GET /v1/environments/{environment_id}/work` — newest first; `secret` always null. */
  list(
    environmentId: string,
    params: WorkListParams = {},
    options?: RequestOptions,
  ): PagePromise<RedactedWork> {
    const path = this.base(environmentId);
    return new PagePromise<RedactedWork>(
      (page) =>
        this.http.request<Page<RedactedWork>>({ method: 'GET', path, query: { ...params, page }, options }),
      params.page,
    );
  }

  /**
   * `GET /v1/environments/{environment_id}/work/poll` — claims the oldest available item with a fresh
   * `secret`, or resolves to `null` when none is available after `block_ms` (the server's `{}`).
   * The call's timeout is stretched to at least `block_ms` + 10 s.
   */
  async poll(
    environmentId: string,
    params: WorkPollParams = {},
    options?: RequestOptions,
  ): Promise<PolledWork | null> {
    const result = await this.http.request<PolledWork | Record<string, never> | undefined>({
      method: 'GET',
      path: `${this.base(environmentId)}/poll`,
      query: params,
      options,
      minTimeoutMs: (params.block_ms ?? 0) + POLL_TIMEOUT_MARGIN_MS,
    });
    if (result === undefined || result === null || Object.keys(result).length === 0) return null;
    return result as PolledWork;
  }

  /** `POST …/work/{work_id}/ack` — `queued` → `starting`; makes the claim's Work token usable. */
  ack(environmentId: string, workId: string, options?: RequestOptions): Promise<RedactedWork> {
    return this.http.request({ method: 'POST', path: `${this.item(environmentId, workId)}/ack`, options });
  }

  /**
   * `POST …/work/{work_id}/heartbeat` — conditional lease renewal. Send `NO_HEARTBEAT` first, then the
   * previous response's `last_heartbeat` verbatim. A stale expectation rejects with
   * `PreconditionFailedError` (see its `currentState`).
   */
  heartbeat(
    environmentId: string,
    workId: string,
    params: WorkHeartbeatParams,
    options?: RequestOptions,
  ): Promise<WorkHeartbeat> {
    return this.http.request({
      method: 'POST',
      path: `${this.item(environmentId, workId)}/heartbeat`,
      query: params,
      options,
    });
  }

  /** `POST …/work/{work_id}/result` — completes a healthcheck (`state: "stopped"`). */
  result(
    environmentId: string,
    workId: string,
    params: WorkResultParams,
    options?: RequestOptions,
  ): Promise<RedactedWork> {
    return this.http.request({
      method: 'POST',
      path: `${this.item(environmentId, workId)}/result`,
      body: params,
      options,
    });
  }

  /** `POST …/work/{work_id}/fail` — terminal path for a permanent input error of Session Work. */
  fail(
    environmentId: string,
    workId: string,
    params: WorkFailParams,
    options?: RequestOptions,
  ): Promise<RedactedWork> {
    return this.http.request({
      method: 'POST',
      path: `${this.item(environmentId, workId)}/fail`,
      body: params,
      options,
    });
  }

  /** `GET /v1/environments/{environment_id}/work/stats` — queue counts. */
  stats(environmentId: string, options?: RequestOptions): Promise<WorkQueueStats> {
    return this.http.request({ method: 'GET', path: `${this.base(environmentId)}/stats`, options });
  }

  /** `POST …/work/{work_id}/stop` — graceful (default) or forced stop; the server answers 204. */
  async stop(
    environmentId: string,
    workId: string,
    params?: WorkStopParams,
    options?: RequestOptions,
  ): Promise<void> {
    await this.http.request<void>({
      method: 'POST',
      path: `${this.item(environmentId, workId)}/stop`,
      body: params,
      options,
    });
  }

  private base(environmentId: string): string {
    return `/v1/environments/${pathSegment(environmentId)}/work`;
  }

  private item(environmentId: string, workId: string): string {
    return `${this.base(environmentId)}/${pathSegment(workId)}`;
  }
}
