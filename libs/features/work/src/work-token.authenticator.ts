import { Inject, Injectable } from '@nestjs/common';
import { tokenAccess } from '@mango/domain-work-lease';
import type { Principal, WorkTokenAuthenticator } from '@mango/feature-auth';
import { WorkItemEntity } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { toLease } from './work-lease.mapper';

/** Resolves a Work token (by digest) to its principal; `live` says whether it may still read its Session. */
@Injectable()
export class WorkTokenAuthenticatorService implements WorkTokenAuthenticator {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async authenticate(digest: Buffer): Promise<Extract<Principal, { kind: 'work' }> | null> {
    const { entities, raw } = await this.dataSource.manager
      .createQueryBuilder(WorkItemEntity, 'w')
      .addSelect('now()', 'db_now')
      .where('w.token_digest = :digest', { digest })
      .getRawAndEntities<{ db_now: Date }>();
    const row = entities[0];
    if (!row) return null;
    return {
      kind: 'work',
      workspaceId: row.workspaceId,
      environmentId: row.environmentId,
      workId: row.id,
      sessionId: row.sessionId,
      tokenDigest: digest,
      live: tokenAccess(toLease(row), new Date(raw[0].db_now), 'session_read').allowed,
    };
  }
}
