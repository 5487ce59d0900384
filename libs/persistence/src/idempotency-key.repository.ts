import type { DataSource, EntityManager } from 'typeorm';

/** Whose key: keys are scoped to a Workspace and the kind of credential that sent them. */
export interface IdempotencyScope {
  workspaceId: string;
  credentialKind: string;
  key: string;
}

/** What a key remembers: the request it was first sent with, and the response to it. */
export interface RememberedRequest {
  requestDigest: string;
  requestMethod: string;
  requestPath: string;
  requestId: string;
  responseStatus: number;
  responseBody: unknown;
}

/**
 * Advisory-lock class of Idempotency-Key locks (the two-int form: a key space of its own, apart from
 * every single-bigint advisory lock such as the migration lock).
 */
const KEY_LOCK_CLASS = 0x1de4;

/**
 * The SQL of `idempotency_keys` (docs/api-guide.md, "Idempotent requests"). `tryLock` and `find` run at
 * the start of the request's transaction, `remember` at its end, so the key commits with the write.
 */
export const IdempotencyKeys = {
  /**
   * Takes the key's transaction-scoped lock without waiting; false while another transaction (the same
   * key's request still running) holds it. Two keys whose 32-bit hashes collide share a lock: the later
   * is told to retry, never merged.
   */
  async tryLock(tx: EntityManager, scope: IdempotencyScope): Promise<boolean> {
    const [row]: Array<{ locked: boolean }> = await tx.query(
      'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked',
      [KEY_LOCK_CLASS, lockName(scope)],
    );
    return row?.locked === true;
  },

  /** The key's unexpired row, if a request with it committed. */
  async find(tx: EntityManager, scope: IdempotencyScope, now: Date): Promise<RememberedRequest | undefined> {
    const [row]: Array<{
      request_digest: string;
      request_method: string;
      request_path: string;
      request_id: string;
      response_status: number;
      response_body: unknown;
    }> = await tx.query(
      `SELECT request_digest, request_method, request_path, request_id, response_status, response_body
         FROM idempotency_keys
        WHERE workspace_id = $1 AND credential_kind = $2 AND key = $3 AND expires_at > $4`,
      [scope.workspaceId, scope.credentialKind, scope.key, now],
    );
    if (!row) return undefined;
    return {
      requestDigest: row.request_digest,
      requestMethod: row.request_method,
      requestPath: row.request_path,
      requestId: row.request_id,
      responseStatus: row.response_status,
      responseBody: row.response_body,
    };
  },

  /** Records the key with its response, in the caller's transaction (an expired row is replaced). */
  async remember(
    tx: EntityManager,
    scope: IdempotencyScope,
    request: RememberedRequest,
    at: Date,
    expiresAt: Date,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys AS k (workspace_id, credential_kind, key, request_digest, request_method,
         request_path, request_id, response_status, response_body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (workspace_id, credential_kind, key) DO UPDATE
         SET request_digest = EXCLUDED.request_digest, request_method = EXCLUDED.request_method,
             request_path = EXCLUDED.request_path, request_id = EXCLUDED.request_id,
             response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE k.expires_at <= EXCLUDED.created_at`,
      [
        scope.workspaceId,
        scope.credentialKind,
        scope.key,
        request.requestDigest,
        request.requestMethod,
        request.requestPath,
        request.requestId,
        request.responseStatus,
        request.responseBody === undefined ? null : JSON.stringify(request.responseBody),
        at,
        expiresAt,
      ],
    );
  },

  /** Deletes up to `limit` keys expired at `now`; returns how many. */
  async prune(ds: DataSource | EntityManager, now: Date, limit: number): Promise<number> {
    const [row]: Array<{ n: number }> = await ds.query(
      `WITH gone AS (
         DELETE FROM idempotency_keys
          WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [now, limit],
    );
    return row?.n ?? 0;
  },
};

/** Unambiguous: Workspace ids and credential kinds never contain `|`; the key comes last. */
function lockName(scope: IdempotencyScope): string {
  return `${scope.workspaceId}|${scope.credentialKind}|${scope.key}`;
}
