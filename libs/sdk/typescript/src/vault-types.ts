import type { Metadata, MetadataPatch, PageParams, Timestamp } from './types';

// ---------------------------------------------------------------------------------------------------
// Vaults and credentials (openapi.yaml, Vaults; docs/api-guide.md, Vaults; openapi.yaml `Vault`, `VaultCredential` shapes). Secrets are write-only: never in responses.
// ---------------------------------------------------------------------------------------------------

export interface Vault {
  id: string;
  type: 'vault';
  display_name: string;
  metadata: Metadata;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

export interface VaultCreateParams {
  display_name: string;
  metadata?: Metadata;
}

export interface VaultUpdateParams {
  display_name?: string;
  metadata?: MetadataPatch | null;
}

export interface VaultListParams extends PageParams {
  include_archived?: boolean;
}

export type TokenEndpointAuthType = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface McpOAuthRefresh {
  client_id: string;
  token_endpoint: string;
  token_endpoint_auth: { type: TokenEndpointAuthType };
  resource: string | null;
  scope: string | null;
}

export type VaultCredentialAuth =
  | { type: 'static_bearer'; mcp_server_url: string }
  | {
      type: 'mcp_oauth';
      mcp_server_url: string;
      expires_at: Timestamp | null;
      refresh: McpOAuthRefresh | null;
    };

export interface VaultCredential {
  id: string;
  type: 'vault_credential';
  vault_id: string;
  display_name: string | null;
  metadata: Metadata;
  auth: VaultCredentialAuth;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
  /**
   * Mango addition, `mcp_oauth` credentials only: the last failed OAuth refresh (cleared by a successful
   * refresh or a secret update), or null.
   */
  refresh_failure?: {
    type: 'failed' | 'connect_error' | 'no_refresh_token';
    message: string;
    at: Timestamp;
  } | null;
}

/**
 * On update, `client_id`, `token_endpoint` and `resource` are immutable once a refresh configuration exists
 * (the stored secrets were issued for them): the same value is accepted, another is 400. Send
 * `refresh: null` first to replace the configuration whole.
 */
export interface McpOAuthRefreshParams {
  client_id?: string;
  refresh_token?: string | null;
  token_endpoint?: string;
  token_endpoint_auth?:
    { type: 'none' } | { type: 'client_secret_basic' | 'client_secret_post'; client_secret: string };
  resource?: string | null;
  scope?: string | null;
}

export type VaultCredentialAuthParams =
  | { type: 'static_bearer'; mcp_server_url?: string; token?: string }
  | {
      type: 'mcp_oauth';
      mcp_server_url?: string;
      access_token?: string;
      expires_at?: string | null;
      refresh?: McpOAuthRefreshParams | null;
    };

export interface VaultCredentialCreateParams {
  /** `static_bearer` needs `mcp_server_url` + `token`; `mcp_oauth` needs `mcp_server_url` + `access_token`. */
  auth: VaultCredentialAuthParams;
  display_name?: string | null;
  metadata?: Metadata;
}

export interface VaultCredentialUpdateParams {
  auth?: VaultCredentialAuthParams;
  display_name?: string | null;
  metadata?: MetadataPatch | null;
}

export interface VaultDeleted {
  id: string;
  type: 'vault_deleted';
}

export interface VaultCredentialDeleted {
  id: string;
  type: 'vault_credential_deleted';
}

export interface HttpResponseSummary {
  status_code: number;
  content_type: string | null;
  body: string;
  body_truncated: boolean;
}

/** `mcp_oauth_validate`: the live probe of an mcp_oauth credential. */
export interface VaultCredentialValidation {
  type: 'vault_credential_validation';
  credential_id: string;
  vault_id: string;
  status: 'valid' | 'invalid' | 'unknown';
  has_refresh_token: boolean;
  mcp_probe: { method: string; http_response: HttpResponseSummary } | null;
  refresh: {
    status: 'succeeded' | 'failed' | 'connect_error' | 'no_refresh_token';
    http_response: HttpResponseSummary | null;
  } | null;
  validated_at: Timestamp;
}
