import { HttpClient, pathSegment, RequestOptions } from '../core';
import type {
  Memory,
  MemoryCreateParams,
  MemoryDeleted,
  MemoryListParams,
  MemoryPrefix,
  MemoryStore,
  MemoryStoreCreateParams,
  MemoryStoreDeleted,
  MemoryStoreListParams,
  MemoryStoreUpdateParams,
  MemoryUpdateParams,
  MemoryVersion,
  MemoryVersionListParams,
  MemoryView,
} from '../memory-types';
import { PagePromise } from '../pagination';
import type { Page } from '../types';

const storePath = (id: string) => `/v1/memory_stores/${pathSegment(id)}`;

/** `client.memoryStores.memories` — Memories at paths in a Store. */
export class Memories {
  constructor(private readonly http: HttpClient) {}

  /** `POST …/memories` — 201; 409 `memory_path_conflict_error` when the path (or an ancestor/descendant) is taken. */
  create(
    storeId: string,
    params: MemoryCreateParams,
    query: { view?: MemoryView } = {},
    options?: RequestOptions,
  ): Promise<Memory> {
    return this.http.request({
      method: 'POST',
      path: `${storePath(storeId)}/memories`,
      query,
      body: params,
      options,
    });
  }

  /** `GET …/memories/{memory_id}` — `view` defaults to `full`. */
  retrieve(
    storeId: string,
    memoryId: string,
    query: { view?: MemoryView } = {},
    options?: RequestOptions,
  ): Promise<Memory> {
    return this.http.request({
      method: 'GET',
      path: `${storePath(storeId)}/memories/${pathSegment(memoryId)}`,
      query,
      options,
    });
  }

  /** `POST …/memories/{memory_id}` — content and/or rename; 409 `memory_precondition_failed_error` on a stale precondition. */
  update(
    storeId: string,
    memoryId: string,
    params: MemoryUpdateParams,
    query: { view?: MemoryView } = {},
    options?: RequestOptions,
  ): Promise<Memory> {
    return this.http.request({
      method: 'POST',
      path: `${storePath(storeId)}/memories/${pathSegment(memoryId)}`,
      query,
      body: params,
      options,
    });
  }

  /** `GET …/memories` — path order; `memory_prefix` rollups with `depth`. */
  list(
    storeId: string,
    params: MemoryListParams = {},
    options?: RequestOptions,
  ): PagePromise<Memory | MemoryPrefix> {
    return new PagePromise<Memory | MemoryPrefix>(
      (page) =>
        this.http.request<Page<Memory | MemoryPrefix>>({
          method: 'GET',
          path: `${storePath(storeId)}/memories`,
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `DELETE …/memories/{memory_id}` — with `expected_content_sha256`, only if the content still matches. */
  delete(
    storeId: string,
    memoryId: string,
    query: { expected_content_sha256?: string } = {},
    options?: RequestOptions,
  ): Promise<MemoryDeleted> {
    return this.http.request({
      method: 'DELETE',
      path: `${storePath(storeId)}/memories/${pathSegment(memoryId)}`,
      query,
      options,
    });
  }
}

/** `client.memoryStores.versions` — a Store's version history (Workspace key). */
export class MemoryVersions {
  constructor(private readonly http: HttpClient) {}

  /** `GET …/memory_versions` — newest first. */
  list(
    storeId: string,
    params: MemoryVersionListParams = {},
    options?: RequestOptions,
  ): PagePromise<MemoryVersion> {
    return new PagePromise<MemoryVersion>(
      (page) =>
        this.http.request<Page<MemoryVersion>>({
          method: 'GET',
          path: `${storePath(storeId)}/memory_versions`,
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `GET …/memory_versions/{memory_version_id}` — `view` defaults to `full`. */
  retrieve(
    storeId: string,
    versionId: string,
    query: { view?: MemoryView } = {},
    options?: RequestOptions,
  ): Promise<MemoryVersion> {
    return this.http.request({
      method: 'GET',
      path: `${storePath(storeId)}/memory_versions/${pathSegment(versionId)}`,
      query,
      options,
    });
  }

  /** `POST …/memory_versions/{memory_version_id}/redact` — clears content, path, digest and size. */
  redact(storeId: string, versionId: string, options?: RequestOptions): Promise<MemoryVersion> {
    return this.http.request({
      method: 'POST',
      path: `${storePath(storeId)}/memory_versions/${pathSegment(versionId)}/redact`,
      options,
    });
  }
}

/** `client.memoryStores` — Memory Stores (served by apps/files behind the same base URL). */
export class MemoryStores {
  readonly memories: Memories;
  readonly versions: MemoryVersions;

  constructor(private readonly http: HttpClient) {
    this.memories = new Memories(http);
    this.versions = new MemoryVersions(http);
  }

  /** `POST /v1/memory_stores` — 201. */
  create(params: MemoryStoreCreateParams, options?: RequestOptions): Promise<MemoryStore> {
    return this.http.request({ method: 'POST', path: '/v1/memory_stores', body: params, options });
  }

  /** `GET /v1/memory_stores/{memory_store_id}` */
  retrieve(storeId: string, options?: RequestOptions): Promise<MemoryStore> {
    return this.http.request({ method: 'GET', path: storePath(storeId), options });
  }

  /** `POST /v1/memory_stores/{memory_store_id}` — `metadata` is a patch. */
  update(storeId: string, params: MemoryStoreUpdateParams, options?: RequestOptions): Promise<MemoryStore> {
    return this.http.request({ method: 'POST', path: storePath(storeId), body: params, options });
  }

  /** `GET /v1/memory_stores` — newest first. */
  list(params: MemoryStoreListParams = {}, options?: RequestOptions): PagePromise<MemoryStore> {
    return new PagePromise<MemoryStore>(
      (page) =>
        this.http.request<Page<MemoryStore>>({
          method: 'GET',
          path: '/v1/memory_stores',
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `POST /v1/memory_stores/{memory_store_id}/archive` — read-only from then on. */
  archive(storeId: string, options?: RequestOptions): Promise<MemoryStore> {
    return this.http.request({ method: 'POST', path: `${storePath(storeId)}/archive`, options });
  }

  /** `DELETE /v1/memory_stores/{memory_store_id}` — with its Memories and versions. */
  delete(storeId: string, options?: RequestOptions): Promise<MemoryStoreDeleted> {
    return this.http.request({ method: 'DELETE', path: storePath(storeId), options });
  }
}
