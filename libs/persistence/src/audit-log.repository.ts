import type { DataSource } from 'typeorm';

/** One row of `audit_log` as written. */
export interface AuditRow {
  id: string;
  workspaceId: string;
  createdAt: Date;
  actorKind: 'workspace_key' | 'environment_key' | 'work_token';
  actorId: string;
  operation: string;
  resourceId: string | null;
  requestId: string;
  statusCode: number;
  outcome: 'succeeded' | 'failed';
}

/** A row as read, with the label its key had when the write was recorded. */
export interface AuditRecord extends AuditRow {
  actorLabel: string | null;
}

/** What a page of the audit log may be narrowed to (every field optional; all given must hold). */
export interface AuditFilter {
  actorId?: string;
  resourceId?: string;
  operation?: string;
  outcome?: 'succeeded' | 'failed';
  createdAt?: { gt?: Date; gte?: Date; lt?: Date; lte?: Date };
  /** Newest first: rows with an id below this one. */
  before?: string;
}

const COLUMNS = `id, workspace_id, created_at, actor_kind, actor_id, actor_label, operation, resource_id,
                 request_id, status_code, outcome`;

/** The SQL of `audit_log` (docs/api-guide.md, "Audit log"): append, read a page newest first, prune. */
export const AuditLog = {
  /**
   * Appends one row. The actor's label is copied from its API key in the same statement (a Work token has
   * none), so the row keeps the name the key had when it wrote, whatever the key becomes.
   */
  async append(db: DataSource, row: AuditRow): Promise<void> {
    await db.query(
      `INSERT INTO audit_log (${COLUMNS})
       VALUES ($1, $2, $3, $4, $5, (SELECT label FROM api_keys WHERE id = $5 AND $4 <> 'work_token'),
               $6, $7, $8, $9, $10)`,
      [
        row.id,
        row.workspaceId,
        row.createdAt,
        row.actorKind,
        row.actorId,
        row.operation,
        row.resourceId,
        row.requestId,
        row.statusCode,
        row.outcome,
      ],
    );
  },

  /** Up to `limit` rows of the Workspace, newest first, narrowed by `filter`. */
  async page(
    db: DataSource,
    workspaceId: string,
    filter: AuditFilter,
    limit: number,
  ): Promise<AuditRecord[]> {
    const where = ['workspace_id = $1'];
    const params: unknown[] = [workspaceId];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.actorId !== undefined) add('actor_id = ?', filter.actorId);
    if (filter.resourceId !== undefined) add('resource_id = ?', filter.resourceId);
    if (filter.operation !== undefined) add('operation = ?', filter.operation);
    if (filter.outcome !== undefined) add('outcome = ?', filter.outcome);
    if (filter.createdAt?.gt) add('created_at > ?', filter.createdAt.gt);
    if (filter.createdAt?.gte) add('created_at >= ?', filter.createdAt.gte);
    if (filter.createdAt?.lt) add('created_at < ?', filter.createdAt.lt);
    if (filter.createdAt?.lte) add('created_at <= ?', filter.createdAt.lte);
    if (filter.before !== undefined) add('id < ?', filter.before);
    params.push(limit);
    const rows: Array<Record<string, unknown>> = await db.query(
      `SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => ({
      id: r.id as string,
      workspaceId: r.workspace_id as string,
      createdAt: r.created_at as Date,
      actorKind: r.actor_kind as AuditRow['actorKind'],
      actorId: r.actor_id as string,
      actorLabel: (r.actor_label as string | null) ?? null,
      operation: r.operation as string,
      resourceId: (r.resource_id as string | null) ?? null,
      requestId: r.request_id as string,
      statusCode: Number(r.status_code),
      outcome: r.outcome as AuditRow['outcome'],
    }));
  },

  /** Deletes up to `batch` rows created before `before`; returns how many. */
  async prune(db: DataSource, before: Date, batch: number): Promise<number> {
    const [row]: Array<{ n: number }> = await db.query(
      `WITH gone AS (
         DELETE FROM audit_log
          WHERE id IN (SELECT id FROM audit_log WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, batch],
    );
    return row?.n ?? 0;
  },
};
