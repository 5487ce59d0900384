import { Inject, Injectable, Optional } from '@nestjs/common';
import { unauthenticated } from '@mango/domain-kernel';
import type { EarlyAuthenticator } from '@mango/platform-http';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { credentialDigestKey, credentialKindOf, digestCredential } from './credential';
import type { Principal } from './principal';
import { WORK_TOKEN_AUTHENTICATOR, WorkTokenAuthenticator } from './work-token-authenticator.port';

/** Reads the credential from `Authorization: Bearer …` or `x-api-key: …` (same meaning). */
export function presentedCredential(req: Pick<Request, 'headers'>): string | undefined {
  const auth = req.headers.authorization;
  const key = req.headers['x-api-key'];
  const fromKey = typeof key === 'string' && key.length > 0 ? key.trim() : undefined;
  if (typeof auth === 'string' && auth.length > 0) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const bearer = m ? m[1] : '';
    // Two different credentials in one request are ambiguous: refuse rather than pick one.
    if (fromKey !== undefined && fromKey !== bearer) return '';
    return bearer;
  }
  return fromKey;
}

/**
 * Who a request's headers say is calling. `cached`: a Workspace key's principal answered from the
 * short-lived cache, which only routes marked `RechecksWorkspaceKey` may rely on (the guard looks it
 * up again for the others). A failure carries the error the guard throws for routes that need a
 * credential (401, or the dependency's error when the key could not be looked up).
 */
export type Authentication =
  { ok: true; principal: Principal; cached: boolean } | { ok: false; error: unknown };

/**
 * Principals remembered briefly per process, so that the hot routes do not cost a key query each:
 * - Environment keys (a supervisor's Poll and Ack): every route an Environment key may call (Poll, Ack,
 *   stats) re-checks the key inside its own transaction, holding the key's row FOR SHARE
 *   (WorkService.holdKey);
 * - Workspace keys, only on routes marked `RechecksWorkspaceKey` (a File's upload and download, a
 *   Session's event append), whose statements re-check the key (`liveWorkspaceKey`); every other route
 *   looks the key up each time.
 * A revoked key passes for at most the TTL and is refused by that check. Only successful look-ups are
 * kept.
 */
export const PRINCIPAL_CACHE_TTL_MS = 10_000;
const PRINCIPAL_CACHE_MAX = 10_000;

/**
 * The one place credentials are checked: from the request's headers alone, before anything reads its
 * body (`createHttpApp` asks first, through `EARLY_AUTHENTICATOR`), then again by the auth guard, which
 * reuses the same answer (one look-up per request) and adds the route's rules (public, allowed kinds).
 * A successful answer puts the principal on the request (`req.principal`) for whatever runs next
 * (e.g. a per-key limiter); handlers read it only after the guard admitted it for their route.
 */
@Injectable()
export class RequestAuthenticator implements EarlyAuthenticator {
  private readonly principals = new Map<string, { principal: Principal; until: number }>();
  private readonly answers = new WeakMap<Request, Promise<Authentication>>();

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Optional() @Inject(WORK_TOKEN_AUTHENTICATOR) private readonly workTokens?: WorkTokenAuthenticator,
  ) {}

  /**
   * Authenticates `req` from its headers, once per request (later calls return the same answer). Never
   * rejects: a missing, malformed, unknown or revoked credential — or a look-up that failed — is
   * `ok: false` with the error to report.
   */
  authenticateFromHeaders(req: Request): Promise<Authentication> {
    let answer = this.answers.get(req);
    if (!answer) {
      answer = this.fromHeaders(req);
      this.answers.set(req, answer);
    }
    return answer;
  }

  private async fromHeaders(req: Request): Promise<Authentication> {
    const credential = presentedCredential(req);
    if (credential === undefined)
      return {
        ok: false,
        error: unauthenticated('missing credential: send Authorization: Bearer <key> or x-api-key'),
      };
    try {
      const found = await this.lookUp(credential, { cacheWorkspaceKey: true });
      if (!found) return { ok: false, error: unauthenticated('invalid or revoked credential') };
      req.principal = found.principal;
      return { ok: true, ...found };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** `cacheWorkspaceKey`: the caller may accept a cached Workspace key principal (see `Authentication`). */
  async authenticate(
    credential: string,
    opts: { cacheWorkspaceKey?: boolean } = {},
  ): Promise<Principal | null> {
    return (await this.lookUp(credential, opts))?.principal ?? null;
  }

  private async lookUp(
    credential: string,
    opts: { cacheWorkspaceKey?: boolean },
  ): Promise<{ principal: Principal; cached: boolean } | null> {
    const kind = credentialKindOf(credential);
    if (!kind) return null;
    if (kind === 'workToken') {
      const principal = this.workTokens
        ? await this.workTokens.authenticate(digestCredential(credential))
        : null;
      return principal ? { principal, cached: false } : null;
    }
    const cacheable = kind === 'environmentKey' || opts.cacheWorkspaceKey === true;
    const cacheKey = credentialDigestKey(credential);
    if (cacheable) {
      const hit = this.principals.get(cacheKey);
      if (hit && hit.until > Date.now()) return { principal: hit.principal, cached: true };
      if (hit) this.principals.delete(cacheKey);
    }
    const rows: Array<{ id: string; workspace_id: string; environment_id: string | null }> =
      await this.dataSource.query(
        `SELECT k.id, k.workspace_id, k.environment_id
         FROM api_keys k
         LEFT JOIN environments e ON e.id = k.environment_id
        WHERE k.digest = $1 AND k.revoked_at IS NULL
          AND (k.environment_id IS NULL OR e.deleted_at IS NULL)`,
        [Buffer.from(cacheKey, 'base64')],
      );
    const row = rows[0];
    if (!row) return null;
    let principal: Principal | null = null;
    if (kind === 'workspaceKey' && row.environment_id === null)
      principal = { kind: 'workspace', workspaceId: row.workspace_id, keyId: row.id };
    if (kind === 'environmentKey' && row.environment_id !== null)
      principal = {
        kind: 'environment',
        workspaceId: row.workspace_id,
        environmentId: row.environment_id,
        keyId: row.id,
      };
    // Any successful look-up is kept (a Workspace key's too: only marked routes read it back).
    if (principal) this.remember(cacheKey, principal);
    return principal ? { principal, cached: false } : null;
  }

  private remember(cacheKey: string, principal: Principal): void {
    this.principals.delete(cacheKey);
    if (this.principals.size >= PRINCIPAL_CACHE_MAX) {
      const oldest = this.principals.keys().next().value;
      if (oldest !== undefined) this.principals.delete(oldest);
    }
    this.principals.set(cacheKey, { principal, until: Date.now() + PRINCIPAL_CACHE_TTL_MS });
  }
}
