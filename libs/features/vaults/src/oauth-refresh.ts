import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressAllowlist } from '@mango/domain-mcp';
import { refusedAddress } from '@mango/domain-mcp';
import { egressRefusalIn, JudgedEgress } from '@mango/platform-egress';
import type { CredentialAuth, CredentialSecrets } from '@mango/domain-vaults';
import type { Keyring } from '@mango/platform-secrets';
import type { StoredCredential, VaultCredentialRepository } from '@mango/persistence';
import { BoundedReplyError, fetchBounded, redactSecrets, shownBody } from './bounded-reply';
import { credentialEvent } from './credential-events';
import { openSecrets, sealSecrets } from './vault-keyring';

/** Refresh this long before `expires_at` (and when no expiry is known, only after a 401). */
export const OAUTH_REFRESH_SKEW_MS = 60_000;

/** Bounds of one token endpoint exchange (docs/api-guide.md, Vaults: OAuth refresh). */
export interface TokenEndpointBounds {
  /** One deadline for the request, the headers and the whole body. */
  deadlineMs: number;
  /** The largest answer read, in bytes (counted while reading; a larger one fails the refresh). */
  maxReplyBytes: number;
}

export const TOKEN_ENDPOINT_BOUNDS: TokenEndpointBounds = { deadlineMs: 10_000, maxReplyBytes: 64 * 1024 };

/** How long a refresh claim outlives the token endpoint's deadline (the two short transactions around it). */
const CLAIM_MARGIN_MS = 20_000;
/** Polling a live claim: from 25 ms, doubling up to 500 ms. */
const waitStep = (i: number) => Math.min(500, 25 * 2 ** i);
/** A refresh that finds the credential changing under it this many times in a row gives up. */
const MAX_ROUNDS = 20;

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

/** Redacts token values a token endpoint echoes, so a response summary never carries a secret. */
export function redactTokens(body: string): string {
  return redactSecrets(body, []);
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

type OAuthAuth = Extract<CredentialAuth, { type: 'mcp_oauth' }>;
type Failure = Exclude<RefreshOutcome, { status: 'succeeded' }>;

const NOT_ACTIVE: Failure = {
  status: 'failed',
  message: 'the credential is not an active mcp_oauth credential',
  http_response: null,
};
const CANCELLED: Failure = {
  status: 'connect_error',
  message: 'the refresh was cancelled',
  http_response: null,
};

/**
 * OAuth 2.0 refresh of `mcp_oauth` credentials (RFC 6749 §6). One refresh per credential at a time across
 * processes — the double-spend guard of docs/api-guide.md (Vaults, OAuth refresh) — without holding a row
 * lock or a pooled connection while the token endpoint is called (VaultCredentialRepository): a short
 * statement claims the credential at the version this refresher decided on, the exchange runs with no
 * connection held (bounded: one deadline over headers and body, a size cap counted while reading, the
 * caller's cancellation), and a second short transaction stores the outcome only while the claim is still
 * this refresher's. A concurrent refresher that finds a live claim waits for it to end and takes its
 * outcome (the new token, or the failure): it never sends the same refresh token again. A failure is
 * recorded on the credential (`refresh_failure`) and announced. Secrets never leave this class except the
 * returned access token (for the MCP request).
 */
export class OAuthRefresher {
  private readonly bounds: TokenEndpointBounds;

  constructor(
    private readonly deps: {
      credentials: VaultCredentialRepository;
      keyring: Keyring;
      allowlist: AddressAllowlist;
      bounds?: Partial<TokenEndpointBounds>;
    },
  ) {
    this.bounds = { ...TOKEN_ENDPOINT_BOUNDS, ...deps.bounds };
  }

  /**
   * Refreshes when the token expires within the skew, or when `staleAccessToken` (the token a server just
   * refused) is still the stored one; otherwise returns the stored token. `signal` cancels the wait for
   * another refresher and the exchange with the token endpoint.
   */
  async refresh(
    credentialId: string,
    opts: { staleAccessToken?: string; signal?: AbortSignal } = {},
  ): Promise<RefreshOutcome> {
    const { credentials, keyring } = this.deps;
    /**
     * The version this refresher decided on before another refresh (or an update) moved the credential:
     * it then takes that outcome instead of sending the refresh token again.
     */
    let waitedAt: number | null = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (opts.signal?.aborted) return CANCELLED;
      const row = await credentials.findById(credentialId);
      if (!row || row.archivedAt || row.kind !== 'mcp_oauth') return NOT_ACTIVE;
      const auth = row.auth as unknown as OAuthAuth;
      const secrets = openSecrets(keyring, row.id, row) ?? {};
      const stale = opts.staleAccessToken !== undefined && opts.staleAccessToken === secrets.access_token;
      if (waitedAt !== null && row.version !== waitedAt) {
        // The claim this refresher waited on has ended: its outcome is this refresh's outcome.
        const f = row.refreshFailure;
        if (f && (f.type === 'failed' || f.type === 'connect_error' || f.type === 'no_refresh_token'))
          return { status: f.type, message: f.message, http_response: null };
        if (secrets.access_token && !stale)
          return { status: 'succeeded', accessToken: secrets.access_token, http_response: null };
      }
      const expiresAt = auth.expires_at ? Date.parse(auth.expires_at) : null;
      const due = stale || (expiresAt !== null && expiresAt - Date.now() < OAUTH_REFRESH_SKEW_MS);
      if (!due && secrets.access_token)
        return { status: 'succeeded', accessToken: secrets.access_token, http_response: null };
      const claim = randomUUID();
      const claimed = await credentials.claimRefresh(
        row.id,
        row.version,
        claim,
        this.bounds.deadlineMs + CLAIM_MARGIN_MS,
      );
      if (claimed) return this.refreshClaimed(claimed, claim, opts.signal);
      // Another refresher holds a live claim, or finished (or an update landed) since this one read.
      const waited = await this.waitWhileClaimed(row.id, row.version, opts.signal);
      if (waited === 'cancelled') return CANCELLED;
      if (waited === 'gone') return NOT_ACTIVE;
      if (waited === 'moved') waitedAt = row.version;
    }
    return {
      status: 'failed',
      message: 'the credential kept changing while it was being refreshed',
      http_response: null,
    };
  }

  /**
   * Waits until the credential leaves `version` (`moved`: a refresh outcome or an update landed) or no
   * live claim holds it any more at that version (`free`: the claim lapsed).
   */
  private async waitWhileClaimed(
    id: string,
    version: number,
    signal?: AbortSignal,
  ): Promise<'moved' | 'free' | 'gone' | 'cancelled'> {
    for (let i = 0; ; i++) {
      const state = await this.deps.credentials.claimState(id);
      if (!state || state.archived) return 'gone';
      if (state.version !== version) return 'moved';
      if (!state.claimed) return 'free';
      try {
        await sleep(waitStep(i), undefined, { signal });
      } catch {
        return 'cancelled';
      }
    }
  }

  /** The exchange with the token endpoint for a credential this refresher has claimed. */
  private async refreshClaimed(
    row: StoredCredential,
    claim: string,
    signal: AbortSignal | undefined,
  ): Promise<RefreshOutcome> {
    const { credentials, keyring } = this.deps;
    const auth = row.auth as unknown as OAuthAuth;
    const secrets = openSecrets(keyring, row.id, row) ?? {};
    const fail = async (
      status: Failure['status'],
      message: string,
      http: HttpResponseSummary | null,
    ): Promise<Failure> => {
      const failure = { type: status, message: message.slice(0, 500), at: new Date().toISOString() };
      // The failure is announced in the same transaction (vault_credential.refresh_failed webhooks).
      await credentials.failRefresh(row.id, claim, failure, [
        credentialEvent('vault_credential.refresh_failed', row.vaultId, row.id),
      ]);
      return { status, message, http_response: http };
    };
    try {
      if (!auth.refresh || !secrets.refresh_token)
        return await fail('no_refresh_token', 'the credential has no refresh token', null);
      const r = auth.refresh;
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: secrets.refresh_token });
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      };
      if (r.token_endpoint_auth.type === 'client_secret_basic') {
        const enc = (v: string) => encodeURIComponent(v);
        headers.authorization = `Basic ${Buffer.from(`${enc(r.client_id)}:${enc(secrets.client_secret ?? '')}`).toString('base64')}`;
      } else {
        form.set('client_id', r.client_id);
        if (r.token_endpoint_auth.type === 'client_secret_post')
          form.set('client_secret', secrets.client_secret ?? '');
      }
      if (r.scope) form.set('scope', r.scope);
      if (r.resource) form.set('resource', r.resource);
      let reply;
      try {
        const url = new URL(r.token_endpoint);
        const egress = egressFor(this.deps.allowlist);
        await egress.check(url);
        reply = await fetchBounded(
          egress.fetch,
          url,
          { method: 'POST', headers, body: form, redirect: 'error' },
          { deadlineMs: this.bounds.deadlineMs, maxBytes: this.bounds.maxReplyBytes, signal },
        );
      } catch (err) {
        if (err instanceof BoundedReplyError && err.kind === 'aborted') {
          // Cancelled mid-exchange: whether the endpoint spent the refresh token is unknown; the claim
          // ends without an outcome and the next refresh decides again.
          await credentials.abandonRefresh(row.id, claim);
          return CANCELLED;
        }
        if (err instanceof BoundedReplyError && err.kind === 'too_large')
          return await fail(
            'failed',
            `the token endpoint answered with more than ${this.bounds.maxReplyBytes} bytes`,
            null,
          );
        if (err instanceof BoundedReplyError && err.kind === 'deadline')
          return await fail(
            'connect_error',
            `the token endpoint did not answer within ${this.bounds.deadlineMs} ms`,
            null,
          );
        return await fail('connect_error', `the token endpoint could not be reached: ${reasonOf(err)}`, null);
      }
      type TokenReply = { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
      let token: TokenReply | null = null;
      try {
        const parsed: unknown = JSON.parse(reply.text);
        if (parsed && typeof parsed === 'object') token = parsed as TokenReply;
      } catch {
        token = null;
      }
      const issued = [token?.access_token, token?.refresh_token].filter(
        (t): t is string => typeof t === 'string',
      );
      // Redacted before the cut: a secret that straddles the cut leaves no fragment.
      const shown: HttpResponseSummary = {
        status_code: reply.status,
        content_type: reply.contentType,
        ...shownBody(reply.text, [
          secrets.refresh_token,
          secrets.client_secret,
          secrets.access_token,
          ...issued,
        ]),
      };
      if (reply.status < 200 || reply.status >= 300)
        return await fail('failed', `the token endpoint answered HTTP ${reply.status}`, shown);
      if (!token)
        return await fail('failed', 'the token endpoint answered with a body that is not JSON', shown);
      if (typeof token.access_token !== 'string' || token.access_token.length === 0)
        return await fail('failed', 'the token endpoint answered without an access_token', shown);
      const accessToken = token.access_token;
      const rotated =
        typeof token.refresh_token === 'string' && token.refresh_token ? token.refresh_token : undefined;
      const expiresAt =
        typeof token.expires_in === 'number' && token.expires_in > 0
          ? new Date(Date.now() + token.expires_in * 1000).toISOString()
          : null;
      const stored = await credentials.commitRefresh(row.id, claim, (current) => {
        const now = openSecrets(keyring, current.id, current) ?? {};
        // An update that replaced the refresh token meanwhile wins over this refresh's result.
        if (now.refresh_token !== secrets.refresh_token) return null;
        const next: CredentialSecrets = {
          ...now,
          access_token: accessToken,
          ...(rotated ? { refresh_token: rotated } : {}),
        };
        const sealed = sealSecrets(keyring, current.id, next);
        return {
          auth: { ...current.auth, expires_at: expiresAt },
          kekId: sealed.kekId,
          wrappedKey: sealed.wrappedKey,
          secretCiphertext: sealed.ciphertext,
        };
      });
      if (!stored)
        return {
          status: 'failed',
          message: 'the credential was updated or archived while it was being refreshed',
          http_response: shown,
        };
      return { status: 'succeeded', accessToken, http_response: shown };
    } catch (err) {
      // Unexpected (the database went away): end the claim so that the next refresh need not wait out
      // the lease.
      await credentials.abandonRefresh(row.id, claim).catch(() => undefined);
      throw err;
    }
  }
}
