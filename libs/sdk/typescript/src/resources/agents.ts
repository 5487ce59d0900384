import { HttpClient, pathSegment, RequestOptions } from '../core';
import { PagePromise } from '../pagination';
import type {
  Agent,
  AgentCreateParams,
  AgentListParams,
  AgentRetrieveParams,
  AgentUpdateParams,
  AgentVersionListParams,
  Page,
} from '../types';

/** `client.agents.versions` */
export class AgentVersions {
  constructor(private readonly http: HttpClient) {}

  /** `GET /v1/agents/{agent_id}/versions` — every stored version, newest first. */
  list(agentId: string, params: AgentVersionListParams = {}, options?: RequestOptions): PagePromise<Agent> {
    const path = `/v1/agents/${pathSegment(agentId)}/versions`;
    return new PagePromise<Agent>(
      (page) => this.http.request<Page<Agent>>({ method: 'GET', path, query: { ...params, page }, options }),
      params.page,
    );
  }
}

/** `client.agents` — versioned Agent configurations. */
export class Agents {
  readonly versions: AgentVersions;

  constructor(private readonly http: HttpClient) {
    this.versions = new AgentVersions(http);
  }

  /** `POST /v1/agents` — creates an Agent at version 1. */
  create(params: AgentCreateParams, options?: RequestOptions): Promise<Agent> {
    return this.http.request({ method: 'POST', path: '/v1/agents', body: params, options });
  }

  /** `GET /v1/agents/{agent_id}` — the latest version, or `params.version`. */
  retrieve(agentId: string, params: AgentRetrieveParams = {}, options?: RequestOptions): Promise<Agent> {
    return this.http.request({
      method: 'GET',
      path: `/v1/agents/${pathSegment(agentId)}`,
      query: params,
      options,
    });
  }

  /** `POST /v1/agents/{agent_id}` — stores a new version if anything changed. */
  update(agentId: string, params: AgentUpdateParams, options?: RequestOptions): Promise<Agent> {
    return this.http.request({
      method: 'POST',
      path: `/v1/agents/${pathSegment(agentId)}`,
      body: params,
      options,
    });
  }

  /** `GET /v1/agents` — latest version of each Agent, newest first. */
  list(params: AgentListParams = {}, options?: RequestOptions): PagePromise<Agent> {
    return new PagePromise<Agent>(
      (page) =>
        this.http.request<Page<Agent>>({
          method: 'GET',
          path: '/v1/agents',
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** `POST /v1/agents/{agent_id}/archive` — permanent; returns the archived Agent. */
  archive(agentId: string, options?: RequestOptions): Promise<Agent> {
    return this.http.request({ method: 'POST', path: `/v1/agents/${pathSegment(agentId)}/archive`, options });
  }
}
