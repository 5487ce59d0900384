import { Inject, Injectable } from '@nestjs/common';
import { tokenAccess } from '@mango/domain-work-lease';
import type { Principal, WorkTokenAuthenticator } from '@mango/feature-auth';
import { findByTokenDigest, toLease } from '@mango/persistence';
import { DataSource } from 'typeorm';

/**
 * The implementation of feature-auth's `WorkTokenAuthenticator` port (`work-token-authenticator.port.ts`):
 * resolves a Work token (by digest) to its principal; `live` says whether it may still read its Session.
 */
@Injectable()
export class WorkTokenAuthenticatorService implements WorkTokenAuthenticator {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async authenticate(digest: Buffer): Promise<Extract<Principal, { kind: 'work' }> | null> {
    const found = await findByTokenDigest(this.dataSource.manager, digest);
    if (!found) return null;
    const { row, now } = found;
    return {
      kind: 'work',
      workspaceId: row.workspaceId,
      environmentId: row.environmentId,
      workId: row.id,
      sessionId: row.sessionId,
      tokenDigest: digest,
      live: tokenAccess(toLease(row), now, 'session_read').allowed,
    };
  }
}
