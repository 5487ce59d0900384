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
    const rows: Array<{ id: string; now: Date }> = await this.dataSource.query(
      'SELECT id, now() AS now FROM work_items WHERE token_digest = $1',
      [digest],
    );
    const hit = rows[0];
    if (!hit) return null;
    const row = await this.dataSource.manager.findOneByOrFail(WorkItemEntity, { id: hit.id });
    return {
      kind: 'work',
      workspaceId: row.workspaceId,
      environmentId: row.environmentId,
      workId: row.id,
      sessionId: row.sessionId,
      tokenDigest: digest,
      live: tokenAccess(toLease(row), new Date(hit.now), 'session_read').allowed,
    };
  }
}
