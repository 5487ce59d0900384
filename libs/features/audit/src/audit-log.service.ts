import { Inject, Injectable } from '@nestjs/common';
import { invalidRequest } from '@mango/domain-kernel';
import { AuditFilter, AuditLog, AuditRecord } from '@mango/persistence';
import {
  decodeCursor,
  Page,
  parseLimit,
  parseTimeRange,
  rejectUnknownQuery,
  toPage,
} from '@mango/platform-pagination';
import { DataSource } from 'typeorm';

/** An audit row as the API shows it (docs/api-guide.md, "Audit log"). */
export interface AuditEntryView {
  type: 'audit_entry';
  id: string;
  created_at: string;
  actor: { type: AuditRecord['actorKind']; id: string; label: string | null };
  operation: string;
  resource_id: string | null;
  request_id: string;
  status_code: number;
  outcome: AuditRecord['outcome'];
}

const SCOPE = 'audit_log';
const FILTERS = ['actor_id', 'resource_id', 'operation', 'outcome'] as const;

/** Reads the Workspace's audit log, newest first, a page at a time. */
@Injectable()
export class AuditLogService {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<AuditEntryView>> {
    rejectUnknownQuery(query, ['limit', 'page', 'created_at', ...FILTERS]);
    const limit = parseLimit(query.limit);
    const filter: AuditFilter = { createdAt: parseTimeRange(query.created_at, 'created_at', ['gte', 'lte']) };
    for (const name of FILTERS) {
      const value = query[name];
      if (value === undefined) continue;
      if (typeof value !== 'string' || value.length === 0 || value.length > 512)
        throw invalidRequest(`${name} must be a non-empty string of at most 512 characters`);
    }
    if (query.outcome !== undefined && query.outcome !== 'succeeded' && query.outcome !== 'failed')
      throw invalidRequest('outcome must be succeeded or failed');
    if (typeof query.actor_id === 'string') filter.actorId = query.actor_id;
    if (typeof query.resource_id === 'string') filter.resourceId = query.resource_id;
    if (typeof query.operation === 'string') filter.operation = query.operation;
    if (typeof query.outcome === 'string') filter.outcome = query.outcome as AuditFilter['outcome'];
    if (typeof query.page === 'string')
      filter.before = decodeCursor(query.page, { scope: SCOPE, order: 'desc' }).after;
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await AuditLog.page(this.dataSource, workspaceId, filter, limit + 1);
    return toPage(rows, limit, (r) => r.id, renderAuditEntry, { scope: SCOPE, order: 'desc' });
  }
}

export function renderAuditEntry(r: AuditRecord): AuditEntryView {
  return {
    type: 'audit_entry',
    id: r.id,
    created_at: r.createdAt.toISOString(),
    actor: { type: r.actorKind, id: r.actorId, label: r.actorLabel },
    operation: r.operation,
    resource_id: r.resourceId,
    request_id: r.requestId,
    status_code: r.statusCode,
    outcome: r.outcome,
  };
}
