import { HttpClient, pathSegment, RequestOptions } from '../core';
import { PagePromise } from '../pagination';
import type {
  Environment,
  EnvironmentCreateParams,
  EnvironmentDeleted,
  EnvironmentListParams,
  EnvironmentUpdateParams,
  Page,
} from '../types';
import { EnvironmentWork } from './work';

/** `client.environments` — self-hosted execution Environments and their Work queues. */
export class Environments {
  readonly work: EnvironmentWork;

  constructor(private readonly http: HttpClient) {
    this.work = new EnvironmentWork(http);
  }

  /** `POST /v1/environments` — 201 with the created Environment. */
  create(params: EnvironmentCreateParams, options?: RequestOptions): Promise<Environment> {
    return this.http.request({ method: 'POST', path: '/v1/environments', body: params, options });
  }

  /** `GET /v1/environments/{environment_id}` */
  retrieve(environmentId: string, options?: RequestOptions): Promise<Environment> {
    return this.http.request({
      method: 'GET',
      path: `/v1/environments/${pathSegment(environmentId)}`,
      options,
    });
  }

  /** `POST /v1/environments/{environment_id}` — omitted fields are preserved; `metadata` is a patch. */
  update(
    environmentId: string,
    params: EnvironmentUpdateParams,
    options?: RequestOptions,
  ): Promise<Environment> {
    return this.http.request({
      method: 'POST',
      path: `/v1/environments/${pathSegment(environmentId)}`,
      body: params,
      options,
    });
  }

  /** `GET /v1/environments` — newest first. */
  list(params: EnvironmentListParams = {}, options?: RequestOptions): PagePromise<Environment> {
    return new PagePromise<Environment>(
      (page) =>
        this.http.request<Page<Environment>>({
          method: 'GET',
          path: '/v1/environments',
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `POST /v1/environments/{environment_id}/archive` — permanent; returns the archived Environment. */
  archive(environmentId: string, options?: RequestOptions): Promise<Environment> {
    return this.http.request({
      method: 'POST',
      path: `/v1/environments/${pathSegment(environmentId)}/archive`,
      options,
    });
  }

  /** `DELETE /v1/environments/{environment_id}` — deletes it with its Work; returns the tombstone. */
  delete(environmentId: string, options?: RequestOptions): Promise<EnvironmentDeleted> {
    return this.http.request({
      method: 'DELETE',
      path: `/v1/environments/${pathSegment(environmentId)}`,
      options,
    });
  }
}
