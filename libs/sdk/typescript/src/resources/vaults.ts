import { HttpClient, pathSegment, RequestOptions } from '../core';
import { PagePromise } from '../pagination';
import type { Page } from '../types';
import type {
  Vault,
  VaultCreateParams,
  VaultCredential,
  VaultCredentialCreateParams,
  VaultCredentialDeleted,
  VaultCredentialUpdateParams,
  VaultCredentialValidation,
  VaultDeleted,
  VaultListParams,
  VaultUpdateParams,
} from '../vault-types';

const vaultPath = (id: string) => `/v1/vaults/${pathSegment(id)}`;
const credPath = (vaultId: string, id: string) => `${vaultPath(vaultId)}/credentials/${pathSegment(id)}`;

/** `client.vaults.credentials` — write-only secrets for remote MCP servers. */
export class VaultCredentials {
  constructor(private readonly http: HttpClient) {}

  /** `POST …/credentials` — 201; 409 on a duplicate (normalised) `mcp_server_url`. */
  create(
    vaultId: string,
    params: VaultCredentialCreateParams,
    options?: RequestOptions,
  ): Promise<VaultCredential> {
    return this.http.request({
      method: 'POST',
      path: `${vaultPath(vaultId)}/credentials`,
      body: params,
      options,
    });
  }

  retrieve(vaultId: string, id: string, options?: RequestOptions): Promise<VaultCredential> {
    return this.http.request({ method: 'GET', path: credPath(vaultId, id), options });
  }

  update(
    vaultId: string,
    id: string,
    params: VaultCredentialUpdateParams,
    options?: RequestOptions,
  ): Promise<VaultCredential> {
    return this.http.request({ method: 'POST', path: credPath(vaultId, id), body: params, options });
  }

  list(
    vaultId: string,
    params: VaultListParams = {},
    options?: RequestOptions,
  ): PagePromise<VaultCredential> {
    return new PagePromise<VaultCredential>(
      (page) =>
        this.http.request<Page<VaultCredential>>({
          method: 'GET',
          path: `${vaultPath(vaultId)}/credentials`,
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  /** Purges the secrets and frees the URL. */
  archive(vaultId: string, id: string, options?: RequestOptions): Promise<VaultCredential> {
    return this.http.request({ method: 'POST', path: `${credPath(vaultId, id)}/archive`, options });
  }

  delete(vaultId: string, id: string, options?: RequestOptions): Promise<VaultCredentialDeleted> {
    return this.http.request({ method: 'DELETE', path: credPath(vaultId, id), options });
  }

  /** Live-probes an `mcp_oauth` credential (refreshing when due or after a 401). */
  mcpOAuthValidate(
    vaultId: string,
    id: string,
    options?: RequestOptions,
  ): Promise<VaultCredentialValidation> {
    return this.http.request({
      method: 'POST',
      path: `${credPath(vaultId, id)}/mcp_oauth_validate`,
      options,
    });
  }
}

/** `client.vaults` */
export class Vaults {
  readonly credentials: VaultCredentials;

  constructor(private readonly http: HttpClient) {
    this.credentials = new VaultCredentials(http);
  }

  create(params: VaultCreateParams, options?: RequestOptions): Promise<Vault> {
    return this.http.request({ method: 'POST', path: '/v1/vaults', body: params, options });
  }

  retrieve(id: string, options?: RequestOptions): Promise<Vault> {
    return this.http.request({ method: 'GET', path: vaultPath(id), options });
  }

  update(id: string, params: VaultUpdateParams, options?: RequestOptions): Promise<Vault> {
    return this.http.request({ method: 'POST', path: vaultPath(id), body: params, options });
  }

  list(params: VaultListParams = {}, options?: RequestOptions): PagePromise<Vault> {
    return new PagePromise<Vault>(
      (page) =>
        this.http.request<Page<Vault>>({
          method: 'GET',
          path: '/v1/vaults',
          query: { ...params, page },
          options,
        }),
      params.page,
    );
  }

  archive(id: string, options?: RequestOptions): Promise<Vault> {
    return this.http.request({ method: 'POST', path: `${vaultPath(id)}/archive`, options });
  }

  /** Deletes the Vault and its credentials. */
  delete(id: string, options?: RequestOptions): Promise<VaultDeleted> {
    return this.http.request({ method: 'DELETE', path: vaultPath(id), options });
  }
}
