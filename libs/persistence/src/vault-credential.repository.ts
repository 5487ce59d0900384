import type { DataSource, EntityManager } from 'typeorm';
import { recordWebhookEvents, type WebhookEventInput } from './webhook-outbox';

/** A credential row as the refresh and the MCP runtime read it: public `auth`, sealed secrets, version. */
export interface StoredCredential {
  id: string;
  vaultId: string;
  workspaceId: string;
  kind: 'static_bearer' | 'mcp_oauth';
  auth: Record<string, unknown>;
  kekId: string | null;
  wrappedKey: Buffer | null;
  secretCiphertext: Buffer | null;
  refreshFailure: { type: string; message: string; at: string } | null;
  version: number;
  archivedAt: Date | null;
}

/** Whether a refresh claim is in flight on a credential, and the version the credential is at. */
export interface RefreshClaimState {
  version: number;
  claimed: boolean;
  archived: boolean;
}

/** What a refresh commits: the new public `auth` and the new sealed secrets. */
export interface RefreshResult {
  auth: Record<string, unknown>;
  kekId: string;
  wrappedKey: Buffer;
  secretCiphertext: Buffer;
}

const COLUMNS = `id, vault_id, workspace_id, kind, auth, kek_id, wrapped_key, secret_ciphertext, refresh_failure,
  version, archived_at`;

interface Row {
  id: string;
  vault_id: string;
  workspace_id: string;
  kind: 'static_bearer' | 'mcp_oauth';
  auth: Record<string, unknown>;
  kek_id: string | null;
  wrapped_key: Buffer | null;
  secret_ciphertext: Buffer | null;
  refresh_failure: StoredCredential['refreshFailure'];
  version: number;
  archived_at: Date | null;
}

const toStored = (r: Row): StoredCredential => ({
  id: r.id,
  vaultId: r.vault_id,
  workspaceId: r.workspace_id,
  kind: r.kind,
  auth: r.auth,
  kekId: r.kek_id,
  wrappedKey: r.wrapped_key,
  secretCiphertext: r.secret_ciphertext,
  refreshFailure: r.refresh_failure,
  version: r.version,
  archivedAt: r.archived_at,
});

/**
 * The reads and writes of `vault_credentials` that Vault credentials are *used* through (ADR 0005): the
 * MCP runtime's credential lookup and the OAuth refresh's claim protocol. The refresh never holds a row
 * lock or a pooled connection while it calls the token endpoint:
 *
 * 1. `claimRefresh` — one statement: the credential is still at the version the caller decided on and no
 *    live claim exists → it records a claim id and a lease, and returns the row (its sealed secrets are the
 *    ones the claimant will send);
 * 2. the caller calls the token endpoint with no connection held;
 * 3. `commitRefresh` / `failRefresh` — one short transaction each: only while the claim is still the
 *    caller's, the outcome is stored, the claim released and the version bumped.
 *
 * A concurrent refresher that finds a live claim waits (`claimState`) for the version to move and takes the
 * claimant's outcome; it never sends the same refresh token again. A claim whose holder died lapses when
 * its lease ends.
 */
export class VaultCredentialRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The credential `id` (archived or not), or null. */
  async findById(id: string): Promise<StoredCredential | null> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM vault_credentials WHERE id = $1`,
      [id],
    );
    return rows[0] ? toStored(rows[0]) : null;
  }

  /**
   * The active credential for an MCP server: the first of `vaultIds` (in that order) holding an active
   * credential whose `url_key` is `urlKey`.
   */
  async findActiveForServer(
    em: Pick<EntityManager, 'query'> | null,
    vaultIds: string[],
    urlKey: string,
  ): Promise<StoredCredential | null> {
    if (vaultIds.length === 0) return null;
    const rows: Row[] = await (em ?? this.dataSource).query(
      `SELECT ${COLUMNS} FROM vault_credentials
        WHERE vault_id = ANY($1::text[]) AND url_key = $2 AND archived_at IS NULL
        ORDER BY array_position($1::text[], vault_id) LIMIT 1`,
      [vaultIds, urlKey],
    );
    return rows[0] ? toStored(rows[0]) : null;
  }

  /**
   * Claims the refresh of an active credential still at `version` when no live claim exists; the claim
   * lapses after `leaseMs`. Returns the claimed row, or null (another claim is live, or the row moved on).
   */
  async claimRefresh(
    id: string,
    version: number,
    claim: string,
    leaseMs: number,
  ): Promise<StoredCredential | null> {
    const [rows]: [Row[], number] = await this.dataSource.query(
      `UPDATE vault_credentials
          SET refresh_claim = $3, refresh_claim_expires_at = now() + make_interval(secs => $4::double precision / 1000)
        WHERE id = $1 AND version = $2 AND archived_at IS NULL
          AND (refresh_claim IS NULL OR refresh_claim_expires_at <= now())
        RETURNING ${COLUMNS}`,
      [id, version, claim, leaseMs],
    );
    return rows[0] ? toStored(rows[0]) : null;
  }

  /** The credential's version and whether a live claim is on it (null: the credential is gone). */
  async claimState(id: string): Promise<RefreshClaimState | null> {
    const rows: Array<{ version: number; claimed: boolean; archived: boolean }> = await this.dataSource.query(
      `SELECT version, (refresh_claim IS NOT NULL AND refresh_claim_expires_at > now()) AS claimed,
              archived_at IS NOT NULL AS archived
         FROM vault_credentials WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Stores a refresh's result while `claim` is still the credential's claim and it is not archived:
   * `merge` gets the row as it is now (an update may have landed meanwhile) and returns what to store,
   * or null to store nothing. Releases the claim and bumps the version. False: the claim was lost.
   */
  async commitRefresh(
    id: string,
    claim: string,
    merge: (current: StoredCredential) => RefreshResult | null,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      const current = await this.lockClaimed(tx, id, claim);
      if (!current) return false;
      const next = merge(current);
      if (next)
        await tx.query(
          `UPDATE vault_credentials
              SET auth = $2, kek_id = $3, wrapped_key = $4, secret_ciphertext = $5, refresh_failure = NULL,
                  refresh_claim = NULL, refresh_claim_expires_at = NULL, version = version + 1, updated_at = now()
            WHERE id = $1`,
          [id, JSON.stringify(next.auth), next.kekId, next.wrappedKey, next.secretCiphertext],
        );
      else await this.release(tx, id);
      return next !== null;
    });
  }

  /**
   * Records a failed refresh (`refresh_failure`) and announces it (`events`, same transaction) while
   * `claim` is still the credential's claim; releases the claim and bumps the version. False: lost.
   */
  async failRefresh(
    id: string,
    claim: string,
    failure: { type: string; message: string; at: string },
    events: WebhookEventInput[],
  ): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      const current = await this.lockClaimed(tx, id, claim);
      if (!current) return false;
      await tx.query(
        `UPDATE vault_credentials
            SET refresh_failure = $2, refresh_claim = NULL, refresh_claim_expires_at = NULL, version = version + 1
          WHERE id = $1`,
        [id, JSON.stringify(failure)],
      );
      await recordWebhookEvents(tx, current.workspaceId, events, new Date(failure.at));
      return true;
    });
  }

  /**
   * Ends `claim` without an outcome (the caller gave up before the token endpoint answered: its refresh
   * token may or may not have been spent). Bumps the version so that waiters decide again.
   */
  async abandonRefresh(id: string, claim: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE vault_credentials SET refresh_claim = NULL, refresh_claim_expires_at = NULL, version = version + 1
        WHERE id = $1 AND refresh_claim = $2`,
      [id, claim],
    );
  }

  private async lockClaimed(tx: EntityManager, id: string, claim: string): Promise<StoredCredential | null> {
    const rows: Row[] = await tx.query(
      `SELECT ${COLUMNS} FROM vault_credentials WHERE id = $1 AND refresh_claim = $2 FOR UPDATE`,
      [id, claim],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.archived_at) {
      await this.release(tx, id);
      return null;
    }
    return toStored(row);
  }

  private async release(tx: EntityManager, id: string): Promise<void> {
    await tx.query(
      `UPDATE vault_credentials SET refresh_claim = NULL, refresh_claim_expires_at = NULL, version = version + 1
        WHERE id = $1`,
      [id],
    );
  }
}
