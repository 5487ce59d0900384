import {
  applyMetadataPatch,
  invalidRequest,
  isObject,
  Metadata,
  parseMetadata,
  readBoolean,
  readObject,
  readString,
} from '@mango/domain-kernel';
import { readMcpServerUrl } from './mcp-url';

/** Limits of Vaults (openapi.yaml, Vaults; docs/api-guide.md, Vaults and Mango's own bounds on secret sizes). */
export const VAULT_LIMITS = {
  credentialsPerVault: 20,
  displayNameMax: 255,
  secretMax: 16_384,
  clientIdMax: 1024,
  scopeMax: 4096,
} as const;

export const CREDENTIAL_KINDS = ['static_bearer', 'mcp_oauth'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const TOKEN_ENDPOINT_AUTH_TYPES = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type TokenEndpointAuthType = (typeof TOKEN_ENDPOINT_AUTH_TYPES)[number];

export const ENVIRONMENT_VARIABLE_REFUSAL =
  'environment_variable credentials are not supported: Mango does not implement secret egress to the ' +
  'sandbox environment (docs/capabilities.md, Vaults), so such a credential would store a secret that is never used. ' +
  'Use static_bearer or mcp_oauth credentials for MCP servers.';

/** The public (non-secret) refresh configuration of an `mcp_oauth` credential. */
export interface OAuthRefreshConfig {
  client_id: string;
  token_endpoint: string;
  token_endpoint_auth: { type: TokenEndpointAuthType };
  resource: string | null;
  scope: string | null;
}

/** What a credential's `auth` shows: never a secret. */
export type CredentialAuth =
  | { type: 'static_bearer'; mcp_server_url: string }
  | {
      type: 'mcp_oauth';
      mcp_server_url: string;
      expires_at: string | null;
      refresh: OAuthRefreshConfig | null;
    };

/** The write-only part, stored only encrypted. */
export interface CredentialSecrets {
  /** static_bearer */
  token?: string;
  /** mcp_oauth */
  access_token?: string;
  refresh_token?: string;
  client_secret?: string;
}

export interface CredentialCreate {
  displayName: string | null;
  metadata: Metadata;
  auth: CredentialAuth;
  /** The normalised matching key of `auth.mcp_server_url` (see mcpUrlKey). */
  urlKey: string;
  secrets: CredentialSecrets;
}

export interface CredentialUpdate {
  displayName: string | null;
  metadata: Metadata;
  auth: CredentialAuth;
  secrets: CredentialSecrets;
  /** True when `secrets` differs from the stored ones (they must be re-encrypted). */
  secretsChanged: boolean;
}

const readSecret = (v: unknown, path: string) => readString(v, path, { min: 1, max: VAULT_LIMITS.secretMax });

function readDisplayName(v: unknown): string | null {
  if (v === null) return null;
  const s = readString(v, 'display_name', { max: VAULT_LIMITS.displayNameMax });
  if (/[\p{Cc}]/u.test(s)) throw invalidRequest('display_name must not contain control characters');
  return s;
}

/** Vault `display_name`: 1–255 characters, no control characters. */
export function readVaultDisplayName(v: unknown): string {
  const s = readString(v, 'display_name', { min: 1, max: VAULT_LIMITS.displayNameMax });
  if (/[\p{Cc}]/u.test(s)) throw invalidRequest('display_name must not contain control characters');
  return s;
}

function readHttpUrl(v: unknown, path: string): string {
  const s = readString(v, path, { min: 1, max: 2048 });
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw invalidRequest(`${path} must be an absolute http or https URL`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password)
    throw invalidRequest(`${path} must be an absolute http or https URL without user name or password`);
  return s;
}

function readExpiresAt(v: unknown, path: string): string | null {
  if (v === null) return null;
  const s = readString(v, path);
  const t = Date.parse(s);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(s) || Number.isNaN(t))
    throw invalidRequest(`${path} must be an RFC 3339 timestamp`);
  return new Date(t).toISOString();
}

function readTokenEndpointAuth(
  v: unknown,
  path: string,
): { auth: { type: TokenEndpointAuthType }; clientSecret: string | undefined } {
  const o = readObject(v, path, ['type', 'client_secret']);
  if (o.type === undefined) throw invalidRequest(`${path}.type is required`);
  if (typeof o.type !== 'string' || !(TOKEN_ENDPOINT_AUTH_TYPES as readonly string[]).includes(o.type))
    throw invalidRequest(`${path}.type must be one of: ${TOKEN_ENDPOINT_AUTH_TYPES.join(', ')}`);
  const type = o.type as TokenEndpointAuthType;
  if (type === 'none') {
    if (o.client_secret !== undefined)
      throw invalidRequest(`${path}.client_secret is not allowed with type none`);
    return { auth: { type }, clientSecret: undefined };
  }
  if (o.client_secret === undefined)
    throw invalidRequest(`${path}.client_secret is required with type ${type}`);
  return { auth: { type }, clientSecret: readSecret(o.client_secret, `${path}.client_secret`) };
}

const REFRESH_FIELDS = [
  'client_id',
  'refresh_token',
  'token_endpoint',
  'token_endpoint_auth',
  'resource',
  'scope',
];

function readRefreshCreate(
  v: unknown,
  path: string,
): { refresh: OAuthRefreshConfig; refreshToken?: string; clientSecret?: string } {
  const o = readObject(v, path, REFRESH_FIELDS);
  if (o.client_id === undefined) throw invalidRequest(`${path}.client_id is required`);
  if (o.token_endpoint === undefined) throw invalidRequest(`${path}.token_endpoint is required`);
  const tea =
    o.token_endpoint_auth === undefined
      ? { auth: { type: 'none' as const }, clientSecret: undefined }
      : readTokenEndpointAuth(o.token_endpoint_auth, `${path}.token_endpoint_auth`);
  return {
    refresh: {
      client_id: readString(o.client_id, `${path}.client_id`, { min: 1, max: VAULT_LIMITS.clientIdMax }),
      token_endpoint: readHttpUrl(o.token_endpoint, `${path}.token_endpoint`),
      token_endpoint_auth: tea.auth,
      resource:
        o.resource === undefined || o.resource === null ? null : readHttpUrl(o.resource, `${path}.resource`),
      scope:
        o.scope === undefined || o.scope === null
          ? null
          : readString(o.scope, `${path}.scope`, { min: 1, max: VAULT_LIMITS.scopeMax }),
    },
    refreshToken:
      o.refresh_token === undefined || o.refresh_token === null
        ? undefined
        : readSecret(o.refresh_token, `${path}.refresh_token`),
    clientSecret: tea.clientSecret,
  };
}

/** Validates an environment_variable create shape fully (so each mistake gets its own reason), then refuses. */
function refuseEnvironmentVariable(o: Record<string, unknown>): never {
  readObject(o, 'auth', ['type', 'secret_name', 'secret_value', 'networking', 'injection_location']);
  if (o.secret_name === undefined) throw invalidRequest('auth.secret_name is required');
  readString(o.secret_name, 'auth.secret_name', { min: 1, max: 255, pattern: /^[A-Za-z_][A-Za-z0-9_]*$/ });
  if (o.secret_value === undefined) throw invalidRequest('auth.secret_value is required');
  readSecret(o.secret_value, 'auth.secret_value');
  if (o.networking !== undefined) {
    const n = readObject(o.networking, 'auth.networking', ['type', 'allowed_hosts']);
    if (n.type !== 'unrestricted' && n.type !== 'limited')
      throw invalidRequest('auth.networking.type must be one of: unrestricted, limited');
  }
  if (o.injection_location !== undefined) {
    const i = readObject(o.injection_location, 'auth.injection_location', ['header', 'body']);
    const header = i.header === undefined ? false : readBoolean(i.header, 'auth.injection_location.header');
    const body = i.body === undefined ? false : readBoolean(i.body, 'auth.injection_location.body');
    if (!header && !body)
      throw invalidRequest('auth.injection_location: at least one of header and body must be true');
  }
  throw invalidRequest(ENVIRONMENT_VARIABLE_REFUSAL);
}

function readKind(o: Record<string, unknown>): CredentialKind {
  if (o.type === undefined) throw invalidRequest('auth.type is required');
  if (o.type === 'environment_variable') refuseEnvironmentVariable(o);
  if (typeof o.type !== 'string' || !(CREDENTIAL_KINDS as readonly string[]).includes(o.type))
    throw invalidRequest(`auth.type must be one of: ${CREDENTIAL_KINDS.join(', ')}`);
  return o.type as CredentialKind;
}

/** Parses `POST /v1/vaults/{id}/credentials`. */
export function parseCredentialCreate(body: unknown): CredentialCreate {
  const b = readObject(body, 'body', ['auth', 'display_name', 'metadata']);
  if (b.auth === undefined) throw invalidRequest('auth is required');
  if (!isObject(b.auth)) throw invalidRequest('auth must be an object');
  const o = b.auth;
  const kind = readKind(o);
  const displayName = b.display_name === undefined ? null : readDisplayName(b.display_name);
  const metadata = parseMetadata(b.metadata);
  if (kind === 'static_bearer') {
    readObject(o, 'auth', ['type', 'mcp_server_url', 'token']);
    if (o.mcp_server_url === undefined) throw invalidRequest('auth.mcp_server_url is required');
    const url = readMcpServerUrl(o.mcp_server_url, 'auth.mcp_server_url');
    if (o.token === undefined) throw invalidRequest('auth.token is required');
    return {
      displayName,
      metadata,
      auth: { type: 'static_bearer', mcp_server_url: url.url },
      urlKey: url.key,
      secrets: { token: readSecret(o.token, 'auth.token') },
    };
  }
  readObject(o, 'auth', ['type', 'mcp_server_url', 'access_token', 'expires_at', 'refresh']);
  if (o.mcp_server_url === undefined) throw invalidRequest('auth.mcp_server_url is required');
  const url = readMcpServerUrl(o.mcp_server_url, 'auth.mcp_server_url');
  if (o.access_token === undefined) throw invalidRequest('auth.access_token is required');
  const secrets: CredentialSecrets = { access_token: readSecret(o.access_token, 'auth.access_token') };
  let refresh: OAuthRefreshConfig | null = null;
  if (o.refresh !== undefined && o.refresh !== null) {
    const r = readRefreshCreate(o.refresh, 'auth.refresh');
    refresh = r.refresh;
    if (r.refreshToken !== undefined) secrets.refresh_token = r.refreshToken;
    if (r.clientSecret !== undefined) secrets.client_secret = r.clientSecret;
  }
  return {
    displayName,
    metadata,
    auth: {
      type: 'mcp_oauth',
      mcp_server_url: url.url,
      expires_at: o.expires_at === undefined ? null : readExpiresAt(o.expires_at, 'auth.expires_at'),
      refresh,
    },
    urlKey: url.key,
    secrets,
  };
}

/**
 * Parses `POST /v1/vaults/{id}/credentials/{cid}` against the stored credential. The kind and the
 * `mcp_server_url` are immutable (a different value is 400), and so are the refresh configuration's
 * `client_id`, `token_endpoint` and `resource` (REFRESH_BINDING_FIELDS); secrets, `expires_at`, `scope`,
 * `token_endpoint_auth`, `display_name` and a `metadata` patch may change. `auth.refresh` is a patch of
 * the stored configuration (`null` removes it with its secrets; on a credential without one it is a whole
 * new configuration); `token_endpoint_auth` inside it is replaced whole.
 */
export function parseCredentialUpdate(
  current: {
    displayName: string | null;
    metadata: Metadata;
    auth: CredentialAuth;
    urlKey: string;
    secrets: CredentialSecrets;
  },
  body: unknown,
): CredentialUpdate {
  const b = readObject(body, 'body', ['auth', 'display_name', 'metadata']);
  const displayName = b.display_name === undefined ? current.displayName : readDisplayName(b.display_name);
  const metadata = applyMetadataPatch(current.metadata, b.metadata);
  let auth = current.auth;
  let secrets = { ...current.secrets };
  if (b.auth !== undefined) {
    if (!isObject(b.auth)) throw invalidRequest('auth must be an object');
    const o = b.auth;
    const kind = readKind(o);
    if (kind !== current.auth.type)
      throw invalidRequest(`auth.type cannot change (this credential is ${current.auth.type})`);
    if (o.mcp_server_url !== undefined) {
      const url = readMcpServerUrl(o.mcp_server_url, 'auth.mcp_server_url');
      if (url.key !== current.urlKey) throw invalidRequest('auth.mcp_server_url is immutable');
    }
    if (current.auth.type === 'static_bearer') {
      readObject(o, 'auth', ['type', 'mcp_server_url', 'token']);
      if (o.token !== undefined) secrets = { token: readSecret(o.token, 'auth.token') };
    } else {
      readObject(o, 'auth', ['type', 'mcp_server_url', 'access_token', 'expires_at', 'refresh']);
      const next = { ...current.auth };
      if (o.access_token !== undefined)
        secrets.access_token = readSecret(o.access_token, 'auth.access_token');
      if (o.expires_at !== undefined) next.expires_at = readExpiresAt(o.expires_at, 'auth.expires_at');
      if (o.refresh === null) {
        next.refresh = null;
        delete secrets.refresh_token;
        delete secrets.client_secret;
      } else if (o.refresh !== undefined) {
        if (current.auth.refresh === null) {
          const r = readRefreshCreate(o.refresh, 'auth.refresh');
          next.refresh = r.refresh;
          delete secrets.refresh_token;
          delete secrets.client_secret;
          if (r.refreshToken !== undefined) secrets.refresh_token = r.refreshToken;
          if (r.clientSecret !== undefined) secrets.client_secret = r.clientSecret;
        } else {
          const p = readObject(o.refresh, 'auth.refresh', REFRESH_FIELDS);
          const r = { ...current.auth.refresh };
          assertBindingUnchanged(current.auth.refresh, p);
          if (p.scope !== undefined)
            r.scope =
              p.scope === null
                ? null
                : readString(p.scope, 'auth.refresh.scope', { min: 1, max: VAULT_LIMITS.scopeMax });
          if (p.token_endpoint_auth !== undefined) {
            const tea = readTokenEndpointAuth(p.token_endpoint_auth, 'auth.refresh.token_endpoint_auth');
            r.token_endpoint_auth = tea.auth;
            if (tea.clientSecret === undefined) delete secrets.client_secret;
            else secrets.client_secret = tea.clientSecret;
          }
          if (p.refresh_token === null) delete secrets.refresh_token;
          else if (p.refresh_token !== undefined)
            secrets.refresh_token = readSecret(p.refresh_token, 'auth.refresh.refresh_token');
          next.refresh = r;
        }
      }
      auth = next;
    }
  }
  return {
    displayName,
    metadata,
    auth,
    secrets,
    secretsChanged: JSON.stringify(sortKeys(secrets)) !== JSON.stringify(sortKeys(current.secrets)),
  };
}

/**
 * What the stored refresh token and client secret were issued for: `client_id`, `token_endpoint` and
 * `resource` of the refresh configuration. They are immutable like `mcp_server_url` (the hosted update
 * variant has no such fields: "keys immutable"), so a Workspace key can never send the stored secrets to
 * another endpoint, client or resource. Sending the same values (URLs compared normalised) is accepted;
 * any difference is 400 naming every changed field. To use other values, remove the configuration
 * (`refresh: null`, which deletes its secrets) and supply a new one with its own secrets, or create a new
 * credential.
 */
export const REFRESH_BINDING_FIELDS = ['client_id', 'token_endpoint', 'resource'] as const;

function assertBindingUnchanged(stored: OAuthRefreshConfig, p: Record<string, unknown>): void {
  const changed: string[] = [];
  if (p.client_id !== undefined) {
    const v = readString(p.client_id, 'auth.refresh.client_id', { min: 1, max: VAULT_LIMITS.clientIdMax });
    if (v !== stored.client_id) changed.push('auth.refresh.client_id');
  }
  if (p.token_endpoint !== undefined) {
    const v = readHttpUrl(p.token_endpoint, 'auth.refresh.token_endpoint');
    if (!sameUrl(v, stored.token_endpoint)) changed.push('auth.refresh.token_endpoint');
  }
  if (p.resource !== undefined) {
    const v = p.resource === null ? null : readHttpUrl(p.resource, 'auth.refresh.resource');
    const same = v === null || stored.resource === null ? v === stored.resource : sameUrl(v, stored.resource);
    if (!same) changed.push('auth.refresh.resource');
  }
  if (changed.length > 0)
    throw invalidRequest(
      `${changed.join(', ')} ${changed.length === 1 ? 'is' : 'are'} immutable: the stored refresh token and ` +
        'client secret were issued for them. Remove the refresh configuration (auth.refresh: null deletes ' +
        'its secrets) and supply a new one with its own secrets, or create a new credential',
    );
}

/** Two absolute http(s) URLs name the same resource (scheme and host case, default port: WHATWG `href`). */
function sameUrl(a: string, b: string): boolean {
  return new URL(a).href === new URL(b).href;
}

function sortKeys(o: CredentialSecrets): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(o).sort()) {
    const v = o[k as keyof CredentialSecrets];
    if (v !== undefined) out[k] = v;
  }
  return out;
}
