import { IsNull, type DataSource } from 'typeorm';
import { SandboxEgressRecordEntity, SessionEntity } from './entities';

/** One connection as the supervisor reports it (validated by the caller). */
export interface SandboxEgressRecordInput {
  kind: 'connect' | 'http';
  host: string;
  port: number;
  allowed: boolean;
  rule: string | null;
  failure: string | null;
  bytesOut: number;
  bytesIn: number;
}

/**
 * The Sandbox egress records' SQL (ADR 0021). `append` writes a batch for a Session Work item of the
 * Environment (its Session read from the item, never from the caller); `listForSession` pages a Session's
 * records in the order they were written.
 */
export class SandboxEgressRecords {
  constructor(private readonly dataSource: DataSource) {}

  /** The rows written, or null when no Session Work item of that id belongs to the Environment. */
  async append(
    environmentId: string,
    workId: string,
    records: SandboxEgressRecordInput[],
  ): Promise<number | null> {
    return this.dataSource.transaction(async (tx) => {
      const [item] = (await tx.query(
        `SELECT session_id FROM work_items WHERE id = $1 AND environment_id = $2 AND kind = 'session'`,
        [workId, environmentId],
      )) as Array<{ session_id: string }>;
      if (!item) return null;
      if (records.length === 0) return 0;
      await tx.insert(
        SandboxEgressRecordEntity,
        records.map((r) => ({
          sessionId: item.session_id,
          workId,
          kind: r.kind,
          host: r.host,
          port: r.port,
          allowed: r.allowed,
          rule: r.rule,
          failure: r.failure,
          bytesOut: String(r.bytesOut),
          bytesIn: String(r.bytesIn),
        })),
      );
      return records.length;
    });
  }

  /** Whether the Workspace has this Session (not deleted): whose records a Workspace key may read. */
  async sessionVisible(workspaceId: string, sessionId: string): Promise<boolean> {
    const session = await this.dataSource.manager.findOne(SessionEntity, {
      where: { id: sessionId, workspaceId, deletedAt: IsNull() },
      select: { id: true },
    });
    return session !== null;
  }

  /** `limit + 1` records of the Session after the id `after` (oldest first). */
  async listForSession(
    sessionId: string,
    after: string | undefined,
    limit: number,
  ): Promise<SandboxEgressRecordEntity[]> {
    const qb = this.dataSource.manager
      .createQueryBuilder(SandboxEgressRecordEntity, 'r')
      .where('r.session_id = :sessionId', { sessionId })
      .orderBy('r.id', 'ASC')
      .limit(limit + 1);
    if (after !== undefined) qb.andWhere('r.id > :after', { after });
    return qb.getMany();
  }
}
