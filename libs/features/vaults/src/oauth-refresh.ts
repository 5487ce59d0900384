import type { AddressAllowlist } from '@mango/domain-mcp';
import { refusedAddress } from '@mango/domain-mcp';
import { egressRefusalIn, JudgedEgress } from '@mango/platform-egress';
import type { CredentialAuth, CredentialSecrets } from '@mango/domain-vaults';
import type { Keyring } from '@mango/platform-secrets';
import { recordWebhookEvents, VaultCredentialEntity } from '@mango/persistence';
import { credentialEvent } from './credential-events';
import type { DataSource } from 'typeorm';
import { openSecrets, sealSecrets } from './vault-keyring';

/** Refresh this long before `expires_at` (and when no expiry is known, only after a 401). */
export const OAUTH_REFRESH_SKEW_MS = 60_000;
const TOKEN_TIMEOUT_MS = 10_000;
const BODY_MAX = 4096;

export interface HttpResponseSummary {
  status_code: number;
  content_type: string | null;
  body: string;
  body_truncated: boolean;
}

export type RefreshOutcome =
  | { status: 'succeeded'; accessToken: string; http_response: HttpResponseSummary | null }
  | {
      status: 'failed' | 'connect_error' | 'no_refresh_token';
      message: string;
      http_response: HttpResponseSummary | null;
    };

async function summarise(res: Response): Promise<HttpResponseSummary> {
  const text = await res.text();
  return {
    status_code: res.status,
    content_type: res.headers.get('content-type'),
    body: text.slice(0, BODY_MAX),
    body_truncated: text.length > BODY_MAX,
  };
}

/** Redacts token values a token endpoint echoes, so a response summary never carries a secret. */
export function redactTokens(body: string): string {
  return body.replace(
    /("(?:access_token|refresh_token|id_token|client_secret)"\s*:\s*")[^"]*"/g,
    '$1[redacted]"',
  );
}

const egresses = new WeakMap<AddressAllowlist, JudgedEgress>();

/**
 * Outbound HTTP to token endpoints and MCP servers under the connectivity rule, pinned to the judged
 * addresses (one dispatcher per allowlist).
 */
export function egressFor(allowlist: AddressAllowlist): JudgedEgress {
  let e = egresses.get(allowlist);
  if (!e) egresses.set(allowlist, (e = new JudgedEgress((a) => refusedAddress(a, allowlist))));
  return e;
}

/** An error's message, or the egress refusal inside it (fetch wraps a refused connection as "fetch failed"). */
export const reasonOf = (err: unknown): string => egressRefusalIn(err)?.message ?? (err as Error).message;

/**
 * OAuth 2.0 refresh of `mcp_oauth` credentials (RFC 6749 §6), serialised per credential across processes by
 * the credential's row lock: the refresh runs inside a `SELECT … FOR UPDATE` transaction, and a waiter that
 * gets the lock after another process refreshed sees the new token and does not spend the refresh token
 * again. A failure is recorded on the credential (`refresh_failure`). Secrets never leave this function
 * except the returned access token (for the MCP request).
 */
export class OAuthRefresher {
  constructor(
    private readonly deps: { dataSource: DataSource; keyring: Keyring; allowlist: AddressAllowlist },
  ) {}

  /**
   * Refreshes when the token expires within the skew, or when `staleAccessToken` (the token a server just
   * refused) is still the stored one; otherwise returns the stored token.
   */
  async refresh(
    credentialId: string,
    opts: { staleAccessToken?: string; force?: boolean } = {},
  ): Promise<RefreshOutcome> {
    const { dataSource, keyring } = this.deps;
    return dataSource.transaction(async (tx) => {
      const row = await tx.findOne(VaultCredentialEntity, {
        where: { id: credentialId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!row || row.archivedAt || row.kind !== 'mcp_oauth')
        return {
          status: 'failed' as const,
          message: 'the credential is not an active mcp_oauth credential',
          http_response: null,
        };
      const auth = row.auth as unknown as Extract<CredentialAuth, { type: 'mcp_oauth' }>;
      const secrets = openSecrets(keyring, row.id, row) ?? {};
      const expiresAt = auth.expires_at ? Date.parse(auth.expires_at) : null;
      const due =
        opts.force ||
        (opts.staleAccessToken !== undefined && opts.staleAccessToken === secrets.access_token) ||
        (expiresAt !== null && expiresAt - Date.now() < OAUTH_REFRESH_SKEW_MS);
      if (!due && secrets.access_token)
        return { status: 'succeeded' as const, accessToken: secrets.access_token, http_response: null };
      const fail = async (
        status: 'failed' | 'connect_error' | 'no_refresh_token',
        message: string,
        http: HttpResponseSummary | null,
      ) => {
        const now = new Date();
        const failure = { type: status, message: message.slice(0, 500), at: now.toISOString() };
        await tx.update(VaultCredentialEntity, { id: row.id }, { refreshFailure: failure });
        // The failure is announced in the same transaction (vault_credential.refresh_failed webhooks).
        await recordWebhookEvents(
          tx,
          row.workspaceId,
          [credentialEvent('vault_credential.refresh_failed', row.vaultId, row.id)],
          now,
        );
        return { status, message, http_response: http };
      };
      if (!auth.refresh || !secrets.refresh_token)
        return fail('no_refresh_token', 'the credential has no refresh token', null);
      const r = auth.refresh;
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: secrets.refresh_token });
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      };
      if (r.token_endpoint_auth.type === 'client_secret_basic') {
        const enc = (s: string) => encodeURIComponent(s);
        headers.authorization = `Basic ${Buffer.from(`${enc(r.client_id)}:${enc(secrets.client_secret ?? '')}`).toString('base64')}`;
      } else {
        form.set('client_id', r.client_id);
        if (r.token_endpoint_auth.type === 'client_secret_post')
          form.set('client_secret', secrets.client_secret ?? '');
      }
      if (r.scope) form.set('scope', r.scope);
      if (r.resource) form.set('resource', r.resource);
      let res: Response;
      try {
        const url = new URL(r.token_endpoint);
        const egress = egressFor(this.deps.allowlist);
        await egress.check(url);
        res = await egress.fetch(url, {
          method: 'POST',
          headers,
          body: form,
          redirect: 'error',
          signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
        });
      } catch (err) {
        return fail('connect_error', `the token endpoint could not be reached: ${reasonOf(err)}`, null);
      }
      const summary = await summarise(res);
      const shown = { ...summary, body: redactTokens(summary.body) };
      if (!res.ok) return fail('failed', `the token endpoint answered HTTP ${res.status}`, shown);
      let token: { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
      try {
        token = JSON.parse(summary.body);
      } catch {
        return fail('failed', 'the token endpoint answered with a body that is not JSON', shown);
      }
      if (typeof token.access_token !== 'string' || token.access_token.length === 0)
        return fail('failed', 'the token endpoint answered without an access_token', shown);
      const next: CredentialSecrets = {
        ...secrets,
        access_token: token.access_token,
        ...(typeof token.refresh_token === 'string' && token.refresh_token
          ? { refresh_token: token.refresh_token }
          : {}),
      };
      const nextAuth = {
        ...auth,
        expires_at:
          typeof token.expires_in === 'number' && token.expires_in > 0
            ? new Date(Date.now() + token.expires_in * 1000).toISOString()
            : null,
      };
      const sealed = sealSecrets(keyring, row.id, next);
      await tx.update(VaultCredentialEntity, { id: row.id }, {
        auth: nextAuth as unknown as Record<string, unknown>,
        kekId: sealed.kekId,
        wrappedKey: sealed.wrappedKey,
        secretCiphertext: sealed.ciphertext,
        refreshFailure: null,
        updatedAt: new Date(),
      } as never);
      return { status: 'succeeded' as const, accessToken: token.access_token, http_response: shown };
    });
  }
}
