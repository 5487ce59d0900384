import { Inject, Injectable, Optional } from '@nestjs/common';
import { conflict, invalidRequest, notFound } from '@mango/domain-kernel';
import {
  CredentialAuth,
  parseCredentialCreate,
  parseCredentialUpdate,
  VAULT_LIMITS,
} from '@mango/domain-vaults';
import { isId, newId } from '@mango/platform-ids';
import {
  decodeCursor,
  Page,
  parseBooleanQuery,
  parseLimit,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import type { Keyring } from '@mango/platform-secrets';
import {
  insertRow,
  recordWebhookEvents,
  VaultCredentialEntity,
  VaultCredentialRepository,
} from '@mango/persistence';
import { credentialEvent } from './credential-events';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { AddressAllowlist } from '@mango/domain-mcp';
import { fetchBounded, shownBody } from './bounded-reply';
import {
  egressFor,
  HttpResponseSummary,
  OAuthRefresher,
  RefreshOutcome,
  TOKEN_ENDPOINT_BOUNDS,
} from './oauth-refresh';
import { CredentialView, renderCredential } from './vault.views';
import { findVault } from './vaults.service';
import { MCP_ALLOWLIST, openSecrets, requireKeyring, sealSecrets, VAULT_KEYRING } from './vault-keyring';

const CURSOR = { scope: 'vault_credentials', order: 'desc' as const };

async function findCredential(
  em: EntityManager,
  vaultId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<VaultCredentialEntity> {
  if (!isId('vaultCredential', id)) throw notFound('vault credential', id);
  const qb = em
    .createQueryBuilder(VaultCredentialEntity, 'c')
    .where('c.id = :id AND c.vault_id = :vaultId', { id, vaultId });
  if (opts.lock) qb.setLock('pessimistic_write');
  const c = await qb.getOne();
  if (!c) throw notFound('vault credential', id);
  return c;
}

const DUPLICATE_URL = (url: string) =>
  conflict(
    `an active credential of this vault already has mcp_server_url ${url} (URLs are compared normalised)`,
  );

/**
 * Vault credentials (openapi.yaml, Vaults; docs/api-guide.md, Vaults). Secrets are write-only: they are sealed (envelope encryption, see
 * `@mango/platform-secrets`) in the same statement that stores the public `auth`, and no response, log
 * line or error ever carries them. Archiving purges the sealed secrets and frees the URL.
 */
@Injectable()
export class VaultCredentialsService {
  private readonly credentials: VaultCredentialRepository;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(VAULT_KEYRING) private readonly keyring: Keyring | null,
    @Optional() @Inject(MCP_ALLOWLIST) private readonly allowlist?: AddressAllowlist,
    @Optional() @Inject(VaultCredentialRepository) credentials?: VaultCredentialRepository,
  ) {
    this.credentials = credentials ?? new VaultCredentialRepository(dataSource);
  }

  /**
   * `mcp_oauth_validate`: refreshes the credential when it is due, probes the MCP server with an MCP
   * `initialize` request carrying the access token, and after a 401/403 refreshes once and probes again.
   * `valid`: the server accepted the token; `invalid`: it refused it (and refreshing did not help);
   * `unknown`: the server could not be reached or answered otherwise. Token values are never shown.
   */
  async validate(workspaceId: string, vaultId: string, id: string) {
    const vault = await findVault(this.dataSource.manager, workspaceId, vaultId);
    const cred = await findCredential(this.dataSource.manager, vault.id, id);
    if (cred.kind !== 'mcp_oauth') throw invalidRequest('only mcp_oauth credentials can be validated');
    if (cred.archivedAt) throw conflict(`vault credential ${cred.id} is archived`);
    const keyring = requireKeyring(this.keyring);
    const allowlist = this.allowlist ?? { entries: [], allows: () => false };
    const refresher = new OAuthRefresher({ credentials: this.credentials, keyring, allowlist });
    const hasRefreshToken = Boolean(openSecrets(keyring, cred.id, cred)?.refresh_token);
    let refresh: RefreshOutcome = await refresher.refresh(cred.id);
    const url = (cred.auth as { mcp_server_url: string }).mcp_server_url;
    let probe = refresh.status === 'succeeded' ? await this.probe(url, refresh.accessToken, allowlist) : null;
    let refreshed = refresh.http_response !== null || refresh.status !== 'succeeded';
    if (
      probe &&
      (probe.status_code === 401 || probe.status_code === 403) &&
      !refreshed &&
      refresh.status === 'succeeded'
    ) {
      refresh = await refresher.refresh(cred.id, { staleAccessToken: refresh.accessToken });
      refreshed = true;
      if (refresh.status === 'succeeded') probe = await this.probe(url, refresh.accessToken, allowlist);
    }
    const code = probe?.status_code;
    const status =
      code !== undefined && code >= 200 && code < 300
        ? 'valid'
        : code === 401 ||
            code === 403 ||
            (refresh.status !== 'succeeded' && refresh.status !== 'connect_error')
          ? 'invalid'
          : 'unknown';
    return {
      type: 'vault_credential_validation' as const,
      credential_id: cred.id,
      vault_id: vault.id,
      status,
      has_refresh_token: hasRefreshToken,
      mcp_probe: probe ? { method: 'initialize', http_response: probe } : null,
      refresh: refreshed ? { status: refresh.status, http_response: refresh.http_response } : null,
      validated_at: new Date().toISOString(),
    };
  }

  /**
   * One MCP `initialize` request with `token`, bounded like a token endpoint exchange (one deadline over
   * headers and body, a size cap counted while reading); the shown body has the token redacted before
   * it is cut. Null: no answer (unreachable, refused by the connectivity rule, or a bound was hit).
   */
  private async probe(
    url: string,
    token: string,
    allowlist: AddressAllowlist,
  ): Promise<HttpResponseSummary | null> {
    try {
      const egress = egressFor(allowlist);
      const target = new URL(url);
      await egress.check(target);
      const reply = await fetchBounded(
        egress.fetch,
        target,
        {
          method: 'POST',
          redirect: 'error',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 'mango-validate', version: '0.1.0' },
            },
          }),
        },
        { deadlineMs: TOKEN_ENDPOINT_BOUNDS.deadlineMs, maxBytes: TOKEN_ENDPOINT_BOUNDS.maxReplyBytes },
      );
      return {
        status_code: reply.status,
        content_type: reply.contentType,
        ...shownBody(reply.text, [token]),
      };
    } catch {
      return null;
    }
  }

  async create(workspaceId: string, vaultId: string, body: unknown): Promise<CredentialView> {
    const input = parseCredentialCreate(body);
    return this.dataSource.transaction(async (tx) => {
      // The Vault row lock serialises the count and uniqueness checks of concurrent creates.
      const vault = await findVault(tx, workspaceId, vaultId, { lock: true });
      if (vault.archivedAt) throw conflict(`vault ${vault.id} is archived: no credentials can be added`);
      const keyring = requireKeyring(this.keyring);
      const active: Array<{ url_key: string }> = await tx.query(
        'SELECT url_key FROM vault_credentials WHERE vault_id = $1 AND archived_at IS NULL',
        [vault.id],
      );
      if (active.some((r) => r.url_key === input.urlKey)) throw DUPLICATE_URL(input.auth.mcp_server_url);
      if (active.length >= VAULT_LIMITS.credentialsPerVault)
        throw invalidRequest(
          `a vault holds at most ${VAULT_LIMITS.credentialsPerVault} active credentials (archive or delete one first)`,
        );
      const now = new Date();
      const id = newId('vaultCredential', now.getTime());
      const sealed = sealSecrets(keyring, id, input.secrets);
      const row = tx.create(VaultCredentialEntity, {
        id,
        vaultId: vault.id,
        workspaceId,
        kind: input.auth.type,
        displayName: input.displayName,
        metadata: input.metadata,
        urlKey: input.urlKey,
        auth: input.auth as unknown as Record<string, unknown>,
        kekId: sealed.kekId,
        wrappedKey: sealed.wrappedKey,
        secretCiphertext: sealed.ciphertext,
        refreshFailure: null,
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
      });
      await insertRow(tx, VaultCredentialEntity, row);
      await recordWebhookEvents(
        tx,
        workspaceId,
        [credentialEvent('vault_credential.created', vault.id, id)],
        now,
      );
      return renderCredential(row);
    });
  }

  async get(workspaceId: string, vaultId: string, id: string): Promise<CredentialView> {
    const vault = await findVault(this.dataSource.manager, workspaceId, vaultId);
    return renderCredential(await findCredential(this.dataSource.manager, vault.id, id));
  }

  async list(
    workspaceId: string,
    vaultId: string,
    query: Record<string, unknown>,
  ): Promise<Page<CredentialView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'include_archived']);
    const limit = parseLimit(query.limit);
    const vault = await findVault(this.dataSource.manager, workspaceId, vaultId);
    const qb = this.dataSource.manager
      .createQueryBuilder(VaultCredentialEntity, 'c')
      .where('c.vault_id = :vaultId', { vaultId: vault.id })
      .orderBy('c.id', 'DESC')
      .limit(limit + 1);
    if (!parseBooleanQuery(query.include_archived, 'include_archived')) qb.andWhere('c.archived_at IS NULL');
    if (typeof query.page === 'string')
      qb.andWhere('c.id < :after', { after: decodeCursor(query.page, CURSOR).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (c) => c.id, renderCredential, CURSOR);
  }

  async update(workspaceId: string, vaultId: string, id: string, body: unknown): Promise<CredentialView> {
    return this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, vaultId, { lock: true });
      const cred = await findCredential(tx, vault.id, id, { lock: true });
      if (vault.archivedAt) throw conflict(`vault ${vault.id} is archived and its credentials are read-only`);
      if (cred.archivedAt) throw conflict(`vault credential ${cred.id} is archived and cannot be updated`);
      const keyring = requireKeyring(this.keyring);
      const secrets = openSecrets(keyring, cred.id, cred) ?? {};
      const next = parseCredentialUpdate(
        {
          displayName: cred.displayName,
          metadata: cred.metadata,
          auth: cred.auth as unknown as CredentialAuth,
          urlKey: cred.urlKey,
          secrets,
        },
        body,
      );
      const authChanged = JSON.stringify(next.auth) !== JSON.stringify(cred.auth);
      const changed =
        next.secretsChanged ||
        authChanged ||
        next.displayName !== cred.displayName ||
        JSON.stringify(next.metadata) !== JSON.stringify(cred.metadata);
      if (!changed) return renderCredential(cred);
      const patch: Partial<VaultCredentialEntity> = {
        displayName: next.displayName,
        metadata: next.metadata,
        auth: next.auth as unknown as Record<string, unknown>,
        updatedAt: new Date(),
      };
      if (next.secretsChanged) {
        const sealed = sealSecrets(keyring, cred.id, next.secrets);
        Object.assign(patch, {
          kekId: sealed.kekId,
          wrappedKey: sealed.wrappedKey,
          secretCiphertext: sealed.ciphertext,
        });
      }
      // New secrets or refresh settings make an earlier refresh failure stale, and move the version: a
      // refresh that decided on the old values does not claim the credential (VaultCredentialRepository).
      const versioned = { ...patch } as QueryDeepPartialEntity<VaultCredentialEntity>;
      if (next.secretsChanged || authChanged) {
        patch.refreshFailure = null;
        Object.assign(versioned, { refreshFailure: null, version: () => 'version + 1' });
      }
      await tx.update(VaultCredentialEntity, { id: cred.id }, versioned);
      return renderCredential({ ...cred, ...patch });
    });
  }

  /** Archive purges the sealed secrets and frees the URL for a new credential (idempotent). */
  async archive(workspaceId: string, vaultId: string, id: string): Promise<CredentialView> {
    return this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, vaultId, { lock: true });
      const cred = await findCredential(tx, vault.id, id, { lock: true });
      if (cred.archivedAt) return renderCredential(cred);
      const now = new Date();
      const patch = {
        archivedAt: now,
        updatedAt: now,
        kekId: null,
        wrappedKey: null,
        secretCiphertext: null,
      };
      await tx.update(
        VaultCredentialEntity,
        { id: cred.id },
        patch as QueryDeepPartialEntity<VaultCredentialEntity>,
      );
      await recordWebhookEvents(
        tx,
        workspaceId,
        [credentialEvent('vault_credential.archived', vault.id, cred.id)],
        now,
      );
      return renderCredential({ ...cred, ...patch });
    });
  }

  async delete(
    workspaceId: string,
    vaultId: string,
    id: string,
  ): Promise<{ id: string; type: 'vault_credential_deleted' }> {
    await this.dataSource.transaction(async (tx) => {
      const vault = await findVault(tx, workspaceId, vaultId, { lock: true });
      const cred = await findCredential(tx, vault.id, id, { lock: true });
      await tx.delete(VaultCredentialEntity, { id: cred.id });
      await recordWebhookEvents(
        tx,
        workspaceId,
        [credentialEvent('vault_credential.deleted', vault.id, cred.id)],
        new Date(),
      );
    });
    return { id, type: 'vault_credential_deleted' };
  }
}
